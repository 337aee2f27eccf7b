import Testing
import FarmCore
import FarmRuntime
import TestSupport

/// The module graph as Package.swift declares it: each target's name, the names of its direct dependencies, and
/// whether it is optimized in debug builds.
struct ModuleGraph {
    enum Kind: String { case systemLibrary, target, executableTarget, testTarget }

    struct Module {
        let kind: Kind
        let dependencies: [String]
        /// Its arguments pass `-O` in `unsafeFlags` (decision 0105).
        var optimizedInDebug = false
    }

    let modules: [String: Module]

    /// Reads the targets of a manifest. It is Swift, not data: this reads the shape every target here is written
    /// in (`.kind(name: "X", dependencies: ["A", "B"], …)`), and `parsed` checks that nothing was missed.
    init(manifest: String) {
        let text = Array(manifest.utf8)
        var found: [String: Module] = [:]
        var starts: [(offset: Int, kind: Kind, name: String, end: Int)] = []
        for kind in [Kind.systemLibrary, .target, .executableTarget, .testTarget] {
            let opening = Array(".\(kind.rawValue)(name: \"".utf8)
            var index = 0
            while let at = Self.find(opening, in: text, from: index) {
                let nameStart = at + opening.count
                guard let close = text[nameStart...].firstIndex(of: UInt8(ascii: "\"")) else { break }
                starts.append((at, kind, String(decoding: text[nameStart..<close], as: UTF8.self), close))
                index = close
            }
        }
        starts.sort { $0.offset < $1.offset }
        for (position, start) in starts.enumerated() {
            // A target's arguments run to the next target (or the end of the file).
            let limit = position + 1 < starts.count ? starts[position + 1].offset : text.count
            var dependencies: [String] = []
            let label = Array("dependencies: [".utf8)
            if let at = Self.find(label, in: text, from: start.end), at < limit {
                var index = at + label.count
                var depth = 1
                var literal: [UInt8]?
                while index < limit, depth > 0 {
                    let byte = text[index]
                    if var current = literal {
                        if byte == UInt8(ascii: "\"") {
                            // Only the names listed directly in the array are dependencies (not `condition:` values).
                            if depth == 1 { dependencies.append(String(decoding: current, as: UTF8.self)) }
                            literal = nil
                        } else {
                            current.append(byte)
                            literal = current
                        }
                    } else if byte == UInt8(ascii: "\"") {
                        literal = []
                    } else if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "(") {
                        depth += 1
                    } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: ")") {
                        depth -= 1
                    }
                    index += 1
                }
            }
            let optimized = Self.find(Array("unsafeFlags([\"-O\"]".utf8), in: text, from: start.end).map { $0 < limit } ?? false
            found[start.name] = Module(kind: start.kind, dependencies: dependencies, optimizedInDebug: optimized)
        }
        modules = found
    }

    /// Every module `name` depends on, directly or through others.
    func closure(of name: String) -> Set<String> {
        var seen = Set<String>()
        var pending = modules[name]?.dependencies ?? []
        while let next = pending.popLast() {
            guard seen.insert(next).inserted else { continue }
            pending += modules[next]?.dependencies ?? []
        }
        return seen
    }

    private static func find(_ needle: [UInt8], in text: [UInt8], from start: Int) -> Int? {
        guard needle.count <= text.count else { return nil }
        var index = start
        while index + needle.count <= text.count {
            if text[index] == needle[0] && Array(text[index..<index + needle.count]) == needle { return index }
            index += 1
        }
        return nil
    }
}

/// The modules a target's Swift files import, read from their `import` lines (attributes, access levels and
/// `import struct X.Y` forms included), by file.
struct SourceImports {
    /// The Swift files under `folder`, recursively, as paths.
    static func swiftFiles(under folder: String) -> [String] {
        guard FileSystem.isDirectory(folder) else { return [] }
        var files: [String] = []
        for name in ((try? FileSystem.entries(folder)) ?? []).sorted() {
            let path = folder + "/" + name
            if FileSystem.isDirectory(path) { files += swiftFiles(under: path) } else if name.hasSuffix(".swift") { files.append(path) }
        }
        return files
    }

    /// The module named by one line of Swift, when the line is an import.
    static func importedModule(_ line: Substring) -> String? {
        var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        while let first = words.first, first.hasPrefix("@") || ["public", "package", "internal", "fileprivate", "private"].contains(first) {
            words = words.dropFirst()
        }
        guard words.first == "import" else { return nil }
        words = words.dropFirst()
        if let kind = words.first, ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"].contains(kind) {
            words = words.dropFirst()
        }
        return words.first.map { String($0.prefix(while: { $0 != "." })) }
    }

    /// Each file under `folder` with the modules it imports.
    static func imports(under folder: String) throws -> [(file: String, modules: [String])] {
        try swiftFiles(under: folder).map { file in
            (file, try FileSystem.readText(file).split(separator: "\n").compactMap(importedModule))
        }
    }
}

@Suite("Module edges")
struct ModuleEdgesTests {
    /// Each C module and the one wrapper module that may import it.
    static let wrappers = ["CZeroMQ": "ZeroMQ", "CSQLite": "SQLite", "CLeptonica": "Leptonica", "CTesseract": "Tesseract",
                           "CQPDF": "QPDF", "CJemalloc": "Allocator", "CICU": "ICU", "CCrypto": "Crypto",
                           "CMicroHTTPD": "MicroHTTPD", "CZlib": "Zlib"]
    /// The worker side: what a worker links. None of it may reach the store.
    static let workerSide = ["FarmWorker", "FarmPipeline", "FarmRender", "FarmAnalysis", "FarmRuntime", "FarmProtocol"]

    let graph: ModuleGraph

    init() throws {
        graph = ModuleGraph(manifest: try FileSystem.readText(Fixtures.packageRoot + "/Package.swift"))
    }

    @Test("the manifest is read whole: every target and its dependencies")
    func parsed() throws {
        #expect(graph.modules.count >= 40)
        #expect(graph.modules.values.filter { $0.kind == .systemLibrary }.count == Self.wrappers.count)
        #expect(graph.modules["FarmCore"]?.dependencies == [])
        #expect(graph.modules["Tesseract"]?.dependencies == ["CTesseract", "Leptonica"])
        // Every dependency named is a module of the package (nothing was cut short or run together).
        for (name, module) in graph.modules {
            for dependency in module.dependencies {
                #expect(graph.modules[dependency] != nil, "\(name) depends on '\(dependency)', which is no target")
            }
        }
    }

    @Test("a C module is imported by its own wrapper only; every C module has one")
    func cModulesOnlyInTheirWrappers() {
        for (name, module) in graph.modules where module.kind == .systemLibrary {
            #expect(Self.wrappers[name] != nil, "C module \(name) has no wrapper listed here")
        }
        for (name, module) in graph.modules {
            for dependency in module.dependencies where graph.modules[dependency]?.kind == .systemLibrary {
                #expect(Self.wrappers[dependency] == name, "\(name) depends on the C module \(dependency)")
            }
        }
    }

    @Test("the worker side never links the store")
    func workerSideWithoutStore() {
        for name in Self.workerSide {
            #expect(graph.modules[name] != nil, "no module \(name)")
            let reached = graph.closure(of: name)
            #expect(!reached.contains("FarmStore") && !reached.contains("SQLite"), "\(name) reaches the store")
            #expect(!reached.contains("FarmExport"), "\(name) reaches FarmExport (store to folder)")
        }
    }

    @Test("ingest (what submit needs) links neither Tesseract nor the pipeline")
    func ingestWithoutEngine() {
        let reached = graph.closure(of: "FarmIngest")
        #expect(graph.modules["FarmIngest"] != nil)
        for forbidden in ["Tesseract", "CTesseract", "FarmPipeline", "FarmWorker"] {
            #expect(!reached.contains(forbidden), "FarmIngest reaches \(forbidden)")
        }
    }

    @Test("ONNX Runtime is opened at run time: its wrapper has no C module and no dependency; ingest does not reach it")
    func onnxRuntimeLoadedAtRunTime() {
        // No systemLibrary and no link to it: building, and running with Tesseract alone, need no ONNX Runtime.
        #expect(graph.modules["ONNXRuntime"]?.kind == .target)
        #expect(graph.modules["ONNXRuntime"]?.dependencies == [])
        #expect(graph.modules["FarmPipeline"]?.dependencies.contains("ONNXRuntime") == true)
        #expect(!graph.closure(of: "FarmIngest").contains("ONNXRuntime"), "FarmIngest reaches ONNXRuntime")
    }

    @Test("the renderers depend on FarmCore and FarmRuntime only: no C module")
    func renderersOnCoreOnly() {
        #expect(graph.closure(of: "FarmRender") == ["FarmCore", "FarmRuntime"])
        #expect(graph.closure(of: "FarmCore").isEmpty)
    }

    @Test("FarmCore holds the domain and FarmRuntime the POSIX helpers, with no C module; one PageSource")
    func runtimeHoldsThePOSIXHelpers() throws {
        #expect(graph.modules["FarmRuntime"]?.dependencies == ["FarmCore"])
        let core = try FileSystem.entries(Fixtures.packageRoot + "/Sources/FarmCore")
        let runtime = try FileSystem.entries(Fixtures.packageRoot + "/Sources/FarmRuntime")
        for helper in ["FileSystem", "NativeThread", "BlockingQueue", "DiskSpace", "Console", "Log", "HostInfo"] {
            #expect(!core.contains(helper + ".swift"), "\(helper) is in FarmCore")
            #expect(runtime.contains(helper + ".swift"), "\(helper) is not in FarmRuntime")
        }
        // One name per concept: the pipeline's input is `PageSource`, the store's reference to a file `SourceRef`.
        var declared: [String] = []
        for file in SourceImports.swiftFiles(under: Fixtures.packageRoot + "/Sources") {
            for line in try FileSystem.readText(file).split(separator: "\n")
            where line.contains(" PageSource") && (line.contains("enum ") || line.contains("struct ") || line.contains("typealias ")) {
                declared.append(String(file.dropFirst(Fixtures.packageRoot.count)) + ": " + line)
            }
        }
        #expect(declared.count == 1, "\(declared)")
    }

    @Test("only FarmStore (and the tests that inspect it) depends on SQLite")
    func sqliteOnlyInTheStore() {
        let dependents = graph.modules.filter { $0.value.kind != .testTarget && $0.value.dependencies.contains("SQLite") }.keys
        #expect(Set(dependents) == ["FarmStore"], "SQLite is a dependency of \(dependents.sorted())")
        // The web and IIIF reach the store only through FarmStore's methods.
        for name in ["FarmWeb", "FarmIIIF"] {
            #expect(graph.modules[name] != nil, "no module \(name)")
            let dependencies = graph.modules[name]?.dependencies ?? []
            #expect(!dependencies.contains("SQLite"), "\(name) depends on SQLite")
        }
    }

    @Test("FarmWeb and FarmIIIF import no SQLite: their queries are Store methods")
    func webAndIIIFWithoutSQL() throws {
        for name in ["FarmWeb", "FarmIIIF"] {
            let files = try SourceImports.imports(under: Fixtures.packageRoot + "/Sources/" + name)
            #expect(!files.isEmpty, "no sources for \(name)")
            for (file, modules) in files {
                #expect(!modules.contains("SQLite") && !modules.contains("CSQLite"), "\(file) imports SQLite")
            }
        }
    }

    @Test("every import of a package module is declared in Package.swift")
    func importsDeclared() throws {
        var checked = 0
        for (name, module) in graph.modules where module.kind != .systemLibrary {
            let folder = Fixtures.packageRoot + (module.kind == .testTarget ? "/Tests/" : "/Sources/") + name
            for (file, modules) in try SourceImports.imports(under: folder) {
                checked += 1
                for imported in modules where imported != name && graph.modules[imported] != nil {
                    #expect(module.dependencies.contains(imported), "\(file) imports \(imported), which \(name) does not declare")
                }
            }
        }
        #expect(checked > 300, "only \(checked) files read")
    }

    @Test("the import reader sees every form of an import line")
    func importLines() {
        #expect(SourceImports.importedModule("import SQLite") == "SQLite")
        #expect(SourceImports.importedModule("@testable import FarmStore") == "FarmStore")
        #expect(SourceImports.importedModule("@preconcurrency internal import SQLite") == "SQLite")
        #expect(SourceImports.importedModule("import struct SQLite.Connection") == "SQLite")
        #expect(SourceImports.importedModule("    import Glibc") == "Glibc")
        #expect(SourceImports.importedModule("// import SQLite") == nil)
        #expect(SourceImports.importedModule("let imported = 1") == nil)
    }

    @Test("a module optimized in debug builds (decision 0105) has no assert(), which -O would turn off in the tests")
    func optimizedModulesWithoutAssert() throws {
        let optimized = graph.modules.filter { $0.value.optimizedInDebug }.keys.sorted()
        #expect(optimized.contains("FarmPipeline"), "the manifest optimizes \(optimized) in debug builds")
        for name in optimized {
            let files = SourceImports.swiftFiles(under: Fixtures.packageRoot + "/Sources/" + name)
            #expect(!files.isEmpty, "no sources for \(name)")
            for file in files {
                for line in try FileSystem.readText(file).split(separator: "\n")
                where !line.drop(while: { $0 == " " }).hasPrefix("//") && (line.contains("assert(") || line.contains("assertionFailure(")) {
                    Issue.record("\(file): \(line.drop(while: { $0 == " " }))")
                }
            }
        }
    }
}
