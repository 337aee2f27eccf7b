import FarmCore

extension DocumentPDF {
    /// The PDF every page of a document came from, page for page, with how its text is laid over it (`overlay`).
    public struct Source {
        public let bytes: [UInt8]
        /// Its name in messages (its path).
        public let name: String
        /// `--pdf-text redo`: the text layers an earlier ocrfarm run added are removed.
        public let replacingEarlier: Bool
        public let type: PDFType
        public let title: String
        public let document: DocumentMetadata

        public init(bytes: [UInt8], name: String, replacingEarlier: Bool, type: PDFType, title: String,
                    document: DocumentMetadata = DocumentMetadata()) {
            self.bytes = bytes
            self.name = name
            self.replacingEarlier = replacingEarlier
            self.type = type
            self.title = title
            self.document = document
        }
    }

    /// How `publish` wrote the document, and how it was made PDF/A-2B (nil: a plain PDF, or as its pages were made).
    public enum Published {
        case overlaid(PDFArchiveOutcome?)
        case merged(PDFArchiveOutcome?)
    }

    /// Writes the document at `output`, the one "overlay the source PDF, else merge" of `export` and `ocr`: the
    /// PDF the pages all came from with their text added (`overlay`), keeping its outline and metadata, when
    /// `source` gives one; else, or when it cannot be overlaid, the pages merged (`merge`) with `metadata`.
    ///
    /// `source` returns nil when the pages are not all one PDF's, page for page, and throws why its PDF cannot be
    /// overlaid (a `DocumentPDFError` says it in its message). Why an overlay was given up goes to `refused` before
    /// the merge. Throws the merge's `DocumentPDFError`, and whatever `metadata` throws.
    public func publish(into output: String, source: () throws -> Source?, refused: (String) -> Void,
                        metadata: () throws -> Metadata?) throws -> Published {
        do {
            if let source = try source() {
                return .overlaid(try overlay(source.bytes, name: source.name, into: output, replacingEarlier: source.replacingEarlier,
                                             type: source.type, title: source.title, document: source.document))
            }
        } catch let error as DocumentPDFError {
            refused(error.message)
        } catch {
            refused("\(error)")
        }
        return .merged(try merge(into: output, metadata: try metadata()))
    }
}
