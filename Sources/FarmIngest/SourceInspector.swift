import FarmCore
import Leptonica
import QPDF

/// What a submitted file holds, judged by its content (never by its name).
public struct SourceInspection: Sendable, Equatable {
    public let kind: SourceKind
    /// Pages in the file (a TIFF's pages, a PDF's pages); 1 for an invalid file, which becomes one failed page.
    public let pages: Int
    /// The format found, e.g. "png", "tiff-g4", "pdf".
    public let format: String
    /// Why the file cannot be read, for `invalid`.
    public let failure: PageFailure?
}

public enum SourceInspector {
    public static let stage = "submit"

    /// How many leading bytes `looksLikePage` needs: a PDF may have up to 1024 bytes of junk before `%PDF-`.
    public static let sniffLength = 1024 + 8

    /// Whether a file's first bytes are those of an image or a PDF (the formats `inspect` reads).
    public static func looksLikePage(_ head: [UInt8]) -> Bool {
        switch ImageFormat.sniff(head) {
        case .unknown, .postscript:
            let marker = Array("%PDF-".utf8)
            return head.count >= marker.count && (0...(head.count - marker.count)).contains { start in
                head[start..<start + marker.count].elementsEqual(marker)
            }
        default:
            return true
        }
    }

    public static func inspect(_ bytes: [UInt8], name: String) -> SourceInspection {
        guard !bytes.isEmpty else {
            return invalid(.decodeFailed, "empty file (0 bytes)")
        }
        let format = ImageFormat.sniff(bytes)
        switch format {
        case .pdf:
            do throws(QPDFError) {
                let info = try QPDF.info(bytes: bytes, name: name)
                guard info.pageCount > 0 else { return invalid(.pdfFailed, "the PDF has no pages", format: "pdf") }
                return SourceInspection(kind: .pdf, pages: info.pageCount, format: "pdf", failure: nil)
            } catch {
                if error.kind == .password {
                    return invalid(.pdfEncrypted, "the PDF is encrypted and needs a password", format: "pdf")
                }
                return invalid(.pdfFailed, "cannot open the PDF: \(error.message)", format: "pdf")
            }
        case .unknown, .postscript:
            let printable = bytes.prefix(512).allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (32..<127).contains($0) || $0 >= 0x80 }
            return invalid(.decodeFailed, printable ? "not an image (looks like text)" : "not an image (unknown format)")
        default:
            return SourceInspection(kind: .image, pages: Pix.pageCount(of: bytes), format: format.description, failure: nil)
        }
    }

    private static func invalid(_ code: FailureCode, _ message: String, format: String = "unknown") -> SourceInspection {
        SourceInspection(kind: .invalid, pages: 1, format: format,
                         failure: PageFailure(stage: stage, code: code, message: message))
    }
}
