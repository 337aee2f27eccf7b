import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// The one place a PDF page is rasterized: poppler's `pdftoppm` run as a child process on one page of a PDF file.
/// The workers (FarmPipeline's `PDFRasterizer`, which chooses the resolution from the page's images) and the page
/// images of the viewer and IIIF (FarmIIIF's `PageImages`, which choose an exact pixel size within render limits)
/// both call it. Each call has a temporary folder of its own for the image and the tool's messages, removed before
/// it returns.
public enum PopplerRasterizer {
    /// How large the page is made.
    public enum Size: Sendable, Equatable {
        /// At `dpi`, as PNM: PGM when `gray`, else PPM. Uncompressed, so neither pdftoppm nor the decoder spends
        /// time on zlib (PNG took 2.7 s of 5.5 s for a 150 dpi page, 4.9 s for an A4 page at 300 dpi; PNM 0.4 s).
        case resolution(dpi: Int, gray: Bool)
        /// Exactly `width` × `height` pixels as pdftoppm is given them (`-scale-to-x`, `-scale-to-y`: for a page
        /// turned a quarter by its /Rotate, the size before it is turned), as PNG.
        case pixels(width: Int, height: Int)
    }

    /// What one run may take; nil fields: no limit.
    public struct Limits: Sendable, Equatable {
        /// Wall time, after which the tool is killed.
        public var seconds: Double?
        /// Its address space (RLIMIT_AS, set by util-linux's `prlimit` before it runs, when that is installed).
        public var addressSpaceBytes: Int?
        /// Its niceness (`setpriority`), so that renders give way to the caller's own threads.
        public var niceness: Int32?

        public init(seconds: Double? = nil, addressSpaceBytes: Int? = nil, niceness: Int32? = nil) {
            self.seconds = seconds
            self.addressSpaceBytes = addressSpaceBytes
            self.niceness = niceness
        }
    }

    /// Why a page was not rasterized; each caller words it for its own errors.
    public enum Failure: Error, Sendable, Equatable {
        /// pdftoppm is not installed (Debian: poppler-utils).
        case notInstalled
        /// No temporary folder, or the tool could not be started.
        case cannotRun(FileError)
        /// It ran past `Limits.seconds` and was killed.
        case timedOut
        /// It exited with `status` (0 when it wrote no image); `said`: the last line of its messages, if any.
        case failed(status: Int32, said: String?)
    }

    /// util-linux's prlimit (Debian: essential, always there).
    public static let prlimitTool = "/usr/bin/prlimit"

    /// The path of the installed poppler tool `name` (`pdftoppm`, `pdfimages`, `pdftotext`), nil when it is not.
    public static func toolPath(_ name: String) -> String? {
        ["/usr/bin/" + name, "/usr/local/bin/" + name].first(where: { FileSystem.exists($0) })
    }

    /// Page `page` (from 0) of the PDF file at `pdf`, at `size`, within `limits`: the image file's bytes.
    public static func rasterize(_ pdf: String, page: Int, size: Size, limits: Limits = Limits()) throws(Failure) -> [UInt8] {
        try rasterizeTelling(pdf, page: page, size: size, limits: limits).image
    }

    /// As `rasterize`, with the errors pdftoppm reported while it drew the page (`Syntax Error (1234): …` lines of a
    /// damaged page, which it draws as far as it can): a page drawn with errors may lack what they concerned.
    public static func rasterizeTelling(_ pdf: String, page: Int, size: Size, limits: Limits = Limits())
        throws(Failure) -> (image: [UInt8], errors: [String])
    {
        guard let tool = toolPath("pdftoppm") else { throw .notInstalled }
        let folder: String
        do throws(FileError) {
            folder = try FileSystem.makeTemporaryDirectory(prefix: "ocrfarm-poppler")
        } catch {
            throw .cannotRun(error)
        }
        defer { FileSystem.remove(folder) }
        let output = folder + "/page"
        let (scaling, file): ([String], String) = switch size {
        case .resolution(let dpi, let gray): (["-r", String(dpi)] + (gray ? ["-gray"] : []), output + (gray ? ".pgm" : ".ppm"))
        case .pixels(let width, let height): (["-scale-to-x", String(width), "-scale-to-y", String(height), "-png"], output + ".png")
        }
        let arguments = scaling + ["-f", String(page + 1), "-l", String(page + 1), "-singlefile", pdf, output]
        let child: ChildProcess
        do throws(FileError) {
            // A page whose drawing asks for more memory than its bitmap needs fails alone: prlimit sets the address
            // space and execs pdftoppm in its place (same pid).
            if let bytes = limits.addressSpaceBytes, FileSystem.exists(prlimitTool) {
                child = try ChildProcess(executable: prlimitTool, arguments: ["--as=\(bytes)", "--", tool] + arguments,
                                         outputPath: folder + "/log.txt")
            } else {
                child = try ChildProcess(executable: tool, arguments: arguments, outputPath: folder + "/log.txt")
            }
        } catch {
            throw .cannotRun(error)
        }
        if let niceness = limits.niceness { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(child.pid), niceness) }
        let status: Int32
        if let seconds = limits.seconds {
            guard let ended = child.wait(milliseconds: Int(seconds * 1000)) else {
                child.signal(SIGKILL)
                child.wait()
                throw .timedOut
            }
            status = ended
        } else {
            status = child.wait()
        }
        guard status == 0, let image = try? FileSystem.read(file) else {
            let said = (try? FileSystem.readText(folder + "/log.txt"))?.split(separator: "\n").last.map(String.init)
            throw .failed(status: status, said: said)
        }
        let said = (try? FileSystem.readText(folder + "/log.txt")) ?? ""
        return (image, said.split(separator: "\n").filter { $0.contains("Error") }.map(String.init))
    }
}
