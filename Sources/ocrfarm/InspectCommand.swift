import FarmCore
import FarmPipeline
import FarmRuntime
import Leptonica

/// `ocrfarm inspect`: what the seeing stages do to one image.
struct InspectCommand: Command {
    static let name = "inspect"
    static let abstract = "Show what the correction stages find and do on one image (corners, rotation, skew…)."
    static let arguments = "IMAGE|PDF"
    static let options: [OptionSpec] = [
        OptionSpec("--highlight", value: "OUT.png", "Write the image with everything outside the document tinted and the corners marked."),
        OptionSpec("--stages", value: "DIR", "Write each stage's image into DIR (01-decode.png, 02-segment.png, …)."),
        OptionSpec("--json", "Print the findings as JSON (default: a short summary)."),
        OptionSpec("--lang", value: "LANGS", "Languages the page would be read in (they guide the text-size scaling)."),
        OptionSpec("--page", value: "N", "The page of a PDF or multi-page TIFF to inspect, from 1 (default: 1)."),
    ] + CorrectionOptions.specs
    static let discussion = """
    The stages run as they do before recognition: decode, segment (find the document in a photo), rectify
    (perspective), orient (0/90/180/270), deskew, dewarp (straighten curved text lines), scale (to the text size
    the engine reads best) and enhance (lighting and contrast). Nothing is recognized. A PDF page (--page) is
    rendered as the farm renders it, at the resolution of its images.

    Exit status: 0 inspected; 64 bad usage; 65 the image cannot be decoded; 66 the file cannot be read.
    """

    let path: String
    let highlight: String?
    let stagesDirectory: String?
    let json: Bool
    let page: Int
    let pageOptions: PageOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.count == 1 else { throw UsageError(message: "inspect takes one image") }
        path = arguments.positionals[0]
        highlight = arguments.string("--highlight")
        stagesDirectory = arguments.string("--stages")
        json = arguments.flag("--json")
        page = (try arguments.int("--page", range: 1...1_000_000) ?? 1) - 1
        let languages = (arguments.string("--lang") ?? "eng").split(separator: "+").map(String.init)
        pageOptions = try CorrectionOptions.apply(arguments, to: PageOptions(languages: languages))
    }

    func run() throws -> ExitStatus {
        let bytes: [UInt8]
        do throws(FileError) {
            bytes = try FileSystem.read(path)
        } catch {
            throw CommandFailure(.noInput, "\(path): \(error.reason)")
        }
        let decoded: DecodedPage
        do throws(PageFailure) {
            // A PDF page is rendered as the farm renders it: at the resolution of its images.
            decoded = try ImageFormat.sniff(bytes) == .pdf ? PageProcessor.decode(.pdf(bytes, index: page))
                : Decoder.decode(bytes, page: page)
        } catch {
            let failure = error
            throw CommandFailure(.dataError, "\(path): \(failure.code): \(failure.message)")
        }
        if let stagesDirectory { try FileSystem.makeDirectory(stagesDirectory) }
        var step = 1
        func save(_ name: String, _ image: Pix) {
            guard let stagesDirectory else { return }
            let file = stagesDirectory + "/" + (step < 10 ? "0" : "") + "\(step)-\(name).png"
            step += 1
            do { try image.write(toFile: file, format: .png) } catch { Console.error("ocrfarm inspect: \(file): \(error)") }
        }
        save("decode", decoded.image)
        let pipeline = PagePipeline(options: PipelineOptions(pageOptions))
        let (_, context) = try pipeline.run(decoded, languages: pageOptions.languages) { name, image in save(name, image) }
        if let kept = context.keptImage { save("kept", kept) }
        if let highlight {
            let corners = context.document?.corners ?? Quad(width: Double(decoded.image.width), height: Double(decoded.image.height))
            try Highlight.document(decoded.image, corners: corners).write(toFile: highlight, format: .png)
        }
        if json {
            Console.out(JSON.object([("source", JSON(path)), ("stages", context.findingsJSON),
                                     ("timings_ms", .object(context.timings.map { ($0.stage, .rounded($0.milliseconds, places: 1)) }))]).pretty + "\n")
        } else {
            var lines = ["\(path): \(decoded.image.width)x\(decoded.image.height) \(decoded.format)"]
            if let document = context.document {
                lines.append(document.isFullFrame ? "document: the whole frame (confidence \(Format.fixed(document.confidence, 2)))"
                    : "document: corners " + document.corners.corners.map(\.description).joined(separator: " ")
                        + " (confidence \(Format.fixed(document.confidence, 2)))")
            }
            for (stage, findings) in context.findings where ["orient", "deskew", "rectify"].contains(stage) {
                lines.append("\(stage): \(findings.rendered)")
            }
            Console.out(lines.joined(separator: "\n") + "\n")
        }
        return .success
    }
}
