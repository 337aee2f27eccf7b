import FarmCore

/// The URLs of one IIIF tree: served (`ocrfarm serve`, under `{base}`) or static (`export --iiif`, files under a
/// folder that a plain web server publishes at `{base}`, so each JSON document's URL ends in `.json`).
public struct IIIFLinks: Sendable, Equatable {
    /// The tree's URL, without a trailing slash ("http://127.0.0.1:8080/iiif").
    public let base: String
    /// Static files: JSON documents end in `.json`, and there is no search service.
    public let isStatic: Bool

    public init(base: String, isStatic: Bool = false) {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.isStatic = isStatic
    }

    private var json: String { isStatic ? ".json" : "" }

    public func manifest(_ document: DocumentID) -> String { "\(base)/\(document)/manifest\(json)" }
    public func canvas(_ document: DocumentID, _ page: PageID) -> String { "\(base)/\(document)/canvas/\(page)" }
    public func annotations(_ document: DocumentID, _ page: PageID) -> String { "\(base)/\(document)/annotations/\(page)\(json)" }
    public func search(_ document: DocumentID) -> String { "\(base)/\(document)/search" }
    /// The Image API service of a page (its info.json is `imageService + "/info.json"`).
    public func imageService(_ page: PageID) -> String { "\(base)/image/\(page)" }
    /// The whole image as JPEG.
    public func fullImage(_ page: PageID) -> String { "\(imageService(page))/full/max/0/default.jpg" }
}

/// Languages as BCP 47 tags: Tesseract names them by ISO 639-2 codes with a script suffix (`chi_sim`).
enum LanguageTag {
    static let known: [String: String] = [
        "eng": "en", "deu": "de", "fra": "fr", "spa": "es", "ita": "it", "por": "pt", "nld": "nl", "rus": "ru",
        "pol": "pl", "ces": "cs", "swe": "sv", "dan": "da", "nor": "no", "fin": "fi", "ell": "el", "tur": "tr",
        "ara": "ar", "heb": "he", "hin": "hi", "jpn": "ja", "kor": "ko", "vie": "vi", "ukr": "uk", "lat": "la",
        "chi_sim": "zh-Hans", "chi_tra": "zh-Hant", "jpn_vert": "ja", "chi_sim_vert": "zh-Hans", "chi_tra_vert": "zh-Hant",
    ]

    /// The tag for a Tesseract language; `none` (IIIF's "no language") when unknown.
    static func tag(_ tesseract: String?) -> String {
        guard let tesseract else { return "none" }
        return known[tesseract] ?? "none"
    }
}
