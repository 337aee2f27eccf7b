// swift-tools-version: 6.0
// ocrfarm: a distributed batch OCR farm. Swift 6 language mode; only the toolchain and system C libraries.
import PackageDescription

let package = Package(
    name: "ocrfarm",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ocrfarm", targets: ["ocrfarm"]),
    ],
    targets: [
        // System libraries: a module map and a shim header each; imported by exactly one wrapper module.
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLeptonica", path: "Sources/CLeptonica", providers: [.apt(["libleptonica-dev"])]),
        .systemLibrary(name: "CTesseract", path: "Sources/CTesseract", providers: [.apt(["libtesseract-dev"])]),
        .systemLibrary(name: "CQPDF", path: "Sources/CQPDF", providers: [.apt(["libqpdf-dev"])]),
        .systemLibrary(name: "CJemalloc", path: "Sources/CJemalloc", providers: [.apt(["libjemalloc-dev"])]),
        .systemLibrary(name: "CICU", path: "Sources/CICU", providers: [.apt(["libicu-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),

        // Wrappers: the only importers of the C modules; they own every C pointer.
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        .target(name: "Leptonica", dependencies: ["CLeptonica"]),
        .target(name: "Tesseract", dependencies: ["CTesseract", "Leptonica"]),
        .target(name: "QPDF", dependencies: ["CQPDF"]),
        .target(name: "Allocator", dependencies: ["CJemalloc", "AllocatorSettings"]),
        // jemalloc's start-up options (its `malloc_conf`), in C: a definition of a C global by that name.
        .target(name: "AllocatorSettings"),
        .target(name: "ICU", dependencies: ["CICU"]),
        .target(name: "Crypto", dependencies: ["CCrypto"]),
        .target(name: "MicroHTTPD", dependencies: ["CMicroHTTPD"]),
        .target(name: "Zlib", dependencies: ["CZlib"]),
        // ONNX Runtime's C API, reached through its shared library opened at run time (dlopen): no C module and
        // nothing at build time, so building, and running with Tesseract alone, need no ONNX Runtime.
        .target(name: "ONNXRuntime", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),

        // Domain.
        .target(name: "FarmCore"),
        .target(name: "FarmProtocol", dependencies: ["FarmCore"]),
        .target(name: "FarmStore", dependencies: ["FarmCore", "FarmRuntime", "SQLite", "Zlib", "Crypto"]),
        .target(name: "FarmRuntime", dependencies: ["FarmCore"]),
        // The page renderers (hOCR, ALTO, PAGE, the searchable PDF page, the page's JSON): the result model in,
        // documents out, with no C library (the PDF page is given its compressed image, font and zlib).
        .target(name: "FarmRender", dependencies: ["FarmCore", "FarmRuntime"]),
        // The worker side: decode, correct, recognize, render. It never links the store (ModuleEdgesTests).
        // Optimized in debug builds too (decision 0105): unoptimized, its pixel loops, the mask and the neural engine's
        // decoding made the suites that run it two to three times slower; it has no assert() that -O would turn off.
        .target(name: "FarmPipeline", dependencies: ["FarmCore", "FarmRuntime", "FarmRender", "FarmAnalysis", "Leptonica",
                                                     "Tesseract", "QPDF", "ONNXRuntime"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(name: "FarmAnalysis", dependencies: ["FarmCore", "ICU"]),
        // Store to folder; qpdf merges the stored PDF pages into a document.
        // A page that failed for good is shown as its image, decoded (Leptonica) from the source after the
        // coordinator's hash check (Crypto), drawn as a page without text (FarmRender).
        .target(name: "FarmExport", dependencies: ["FarmCore", "FarmStore", "FarmRender", "FarmRuntime", "Leptonica", "Crypto",
                                                   "QPDF"]),
        // What submit needs: sniffing and splitting source files (Leptonica, qpdf) into the store, without Tesseract.
        .target(name: "FarmIngest", dependencies: ["FarmCore", "FarmRuntime", "FarmStore", "Leptonica", "QPDF", "Crypto"]),
        .target(name: "FarmCoordinator", dependencies: ["Crypto", "FarmCore", "FarmProtocol", "FarmStore", "FarmRuntime", "QPDF",
                                                        "ZeroMQ"]),
        .target(name: "FarmWorker", dependencies: ["Allocator", "Crypto", "FarmCore", "FarmProtocol", "FarmPipeline", "FarmRuntime", "ZeroMQ"]),
        // The farm on one machine (`ocrfarm run`): an embedded coordinator and supervised worker processes.
        // `ocrfarm serve`: the HTTP API, /metrics and the webhook over the store, read through FarmStore's `StoreReaders`.
        // Its dashboard and viewer are files in Sources/FarmWeb/Web, compiled in as byte arrays (`PackageResources`).
        .target(name: "FarmWeb", dependencies: ["FarmCore", "FarmStore", "FarmIngest", "FarmRender", "FarmRuntime", "MicroHTTPD",
                                                "Crypto"],
                resources: [.embedInCode("Web")]),
        .target(name: "FarmLocal", dependencies: ["FarmCore", "FarmCoordinator", "FarmStore", "FarmRuntime", "ZeroMQ"]),
        // IIIF (issue 21): Presentation 3.0 manifests, Image API 3.0 level 1 and Content Search 2.0 over a store opened
        // read-only, as an HTTP handler (`ocrfarm serve` routes /iiif to it) and as static files (`export --iiif`).
        .target(name: "FarmIIIF", dependencies: ["FarmCore", "FarmStore", "FarmRuntime", "Leptonica", "Crypto", "MicroHTTPD",
                                                 "QPDF"]),

        // The thin CLI.
        .executableTarget(name: "ocrfarm", dependencies: [
            "FarmCore", "FarmPipeline", "FarmStore", "FarmIngest", "FarmCoordinator", "FarmWorker", "FarmRuntime",
            "FarmLocal", "FarmProtocol", "FarmExport", "FarmRender", "FarmIIIF", "FarmWeb", "ZeroMQ", "Allocator", "Leptonica",
        ]),

        // Test helpers: fixture paths, temporary folders, running the built binary, bad-input makers.
        .target(name: "TestSupport", dependencies: ["FarmCore", "FarmRuntime"], path: "Tests/TestSupport"),

        // Fuzzers: Scripts/fuzz builds them with libFuzzer; a normal build checks the files it is given once.
        .executableTarget(name: "FrameFuzzer", dependencies: ["FarmProtocol", "FarmCore", "TestSupport"], path: "Fuzz/FrameFuzzer"),
        .executableTarget(name: "DecodeFuzzer", dependencies: ["FarmPipeline", "FarmCore", "Leptonica", "TestSupport"],
                          path: "Fuzz/DecodeFuzzer"),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "TestSupport"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "TestSupport"]),
        .testTarget(name: "LeptonicaTests", dependencies: ["Leptonica", "TestSupport"]),
        .testTarget(name: "TesseractTests", dependencies: ["Tesseract", "Leptonica", "FarmCore", "TestSupport"]),
        .testTarget(name: "QPDFTests", dependencies: ["QPDF", "FarmCore", "FarmRuntime", "TestSupport"]),
        .testTarget(name: "ICUTests", dependencies: ["ICU"]),
        // Golden/: the inputs and the script that made the expected outputs with ONNX Runtime's Python binding.
        .testTarget(name: "ONNXRuntimeTests", dependencies: ["ONNXRuntime", "TestSupport"], exclude: ["Golden"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"]),
        .testTarget(name: "MicroHTTPDTests", dependencies: ["MicroHTTPD", "TestSupport"]),
        .testTarget(name: "FarmAnalysisTests", dependencies: ["FarmAnalysis", "ICU", "FarmCore"]),
        .testTarget(name: "FarmCoreTests", dependencies: ["FarmCore", "FarmRuntime", "TestSupport"]),
        .testTarget(name: "FarmRuntimeTests", dependencies: ["FarmRuntime", "FarmCore", "TestSupport"]),
        .testTarget(name: "FarmPipelineTests", dependencies: ["FarmPipeline", "FarmCore", "FarmRuntime", "FarmAnalysis", "Leptonica", "Tesseract",
                                                             "TestSupport"]),
        .testTarget(name: "FarmExportTests", dependencies: ["FarmExport", "FarmCore", "FarmRuntime", "TestSupport"]),
        .testTarget(name: "FarmRenderTests", dependencies: ["FarmRender", "FarmCore", "FarmRuntime", "TestSupport"]),
        .testTarget(name: "FarmProtocolTests", dependencies: ["FarmProtocol", "FarmCore", "FarmRuntime", "TestSupport"]),
        .testTarget(name: "FarmStoreTests", dependencies: ["FarmStore", "FarmCore", "FarmRuntime", "SQLite", "Zlib", "Crypto", "TestSupport"]),
        .testTarget(name: "FarmCoordinatorTests", dependencies: ["Crypto", "FarmCoordinator", "FarmStore", "FarmProtocol", "FarmCore", "FarmRuntime",
                                                                "SQLite", "ZeroMQ", "TestSupport"]),
        .testTarget(name: "FarmLocalTests", dependencies: ["FarmLocal", "FarmStore", "FarmCore", "FarmRuntime", "TestSupport"]),
        .testTarget(name: "FarmWorkerTests", dependencies: ["FarmWorker", "FarmPipeline", "Crypto", "FarmProtocol", "FarmCore", "FarmRuntime",
                                                           "ZeroMQ", "TestSupport"]),
        .testTarget(name: "FarmIngestTests", dependencies: ["FarmIngest", "FarmStore", "FarmCore", "FarmRuntime", "Leptonica", "QPDF", "TestSupport"]),
        .testTarget(name: "FarmIIIFTests", dependencies: ["FarmIIIF", "FarmRender", "ocrfarm", "FarmStore", "FarmCore", "FarmRuntime", "MicroHTTPD",
                                                          "Leptonica", "TestSupport"]),   // Leptonica: PageImagesTests makes and reads images
        .testTarget(name: "FarmWebTests", dependencies: ["ocrfarm", "FarmWeb", "Crypto", "FarmStore", "FarmCore", "FarmRuntime", "MicroHTTPD", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["ocrfarm", "FarmCore", "FarmRuntime", "FarmStore", "FarmProtocol", "FarmAnalysis", "FarmRender",
                                                          "SQLite", "ZeroMQ", "Leptonica", "Tesseract", "TestSupport"]),
    ]
)
