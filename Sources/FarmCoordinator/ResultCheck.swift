import FarmCore
import FarmProtocol
import FarmStore
import QPDF

/// What a worker sends is checked before the store keeps it (issue 18): a worker is trusted no further than it must
/// be, and `export` hands stored renderings to archives as they are. A forged `%PDF` or broken XML from a rogue or
/// broken worker fails the attempt (retryable: another worker may read the page properly), never reaches the store.
enum ResultCheck {
    /// Nil when the result may be stored, else what is wrong with it.
    static func problem(in result: ResultMessage) -> String? {
        guard String(validating: result.text, as: UTF8.self) != nil else { return "its text is not UTF-8" }
        guard (try? JSON.parse(result.structure)) != nil else { return "its structure is not JSON" }
        var seen = Set<OutputFormat>()
        var models = 0
        for (name, bytes) in result.artifacts {
            // The page's model (render on demand): the store renders from it, so it must read back whole.
            if name == Store.modelName {
                models += 1
                guard models == 1 else { return "it sent two models" }
                guard let json = try? JSON.parse(bytes), PageModel(json: json, text: "") != nil else {
                    return "its page model is not one the farm can render from"
                }
                continue
            }
            guard let format = OutputFormat(rawValue: name), OutputFormat.storable.contains(format) else {
                return "an artifact named '\(Self.shown(name))' is no rendering the farm stores"
            }
            guard seen.insert(format).inserted else { return "it sent two \(name) renderings" }
            switch format {
            case .pdf:
                // qpdf parses the whole structure: a page's PDF is one unencrypted page.
                guard let info = try? QPDF.info(bytes: bytes, name: "the page PDF"), info.pageCount == 1, !info.isEncrypted else {
                    return "its PDF is not a one-page PDF qpdf can read"
                }
            case .hocr, .alto, .page:
                guard XML.isWellFormed(bytes) else { return "its \(name) rendering is not well-formed XML" }
            case .json:
                guard (try? JSON.parse(bytes)) != nil else { return "its json rendering is not JSON" }
            case .text:
                break
            }
        }
        return nil
    }

    /// A name from the wire, cut and with controls escaped, for a log line.
    private static func shown(_ name: String) -> String {
        String(name.unicodeScalars.prefix(40).map { $0.isControlCharacter ? "?" : Character($0) })
    }
}
