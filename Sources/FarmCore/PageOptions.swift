/// How a page is to be read: chosen at submit, stored with the document, carried in every JOB.
public struct PageOptions: Sendable, Equatable {
    /// Languages in priority order.
    public var languages: [String]
    /// Stop recognizing after this many milliseconds (nil: no limit).
    public var timeoutMilliseconds: Int?
    /// The look of the page image kept for the PDF: "color", "gray" or "bw".
    public var imageMode: String
    /// Correction stages left out ("segment", "orient", "deskew", "scale", "enhance").
    public var skippedStages: [String]
    /// Alternative readings to keep per word, with their confidences (0: none).
    public var candidates: Int
    /// Words the page may contain that no dictionary knows (names, terms, codes): near misses are read as them.
    public var words: [String]
    /// Text smaller than this fraction of the page's height is ignored (nil: all text is read).
    public var minTextHeight: Double?

    public static let correctionStages = ["segment", "orient", "deskew", "scale", "enhance"]
    public static let imageModes = ["color", "gray", "bw"]

    /// The most alternatives a word can carry.
    public static let maximumCandidates = 10
    /// The most custom words a page's options carry (they travel in every JOB).
    public static let maximumWords = 10_000

    public init(languages: [String] = ["eng"], timeoutMilliseconds: Int? = nil, imageMode: String = "gray",
                skippedStages: [String] = [], candidates: Int = 0, words: [String] = [], minTextHeight: Double? = nil)
    {
        self.languages = languages
        self.timeoutMilliseconds = timeoutMilliseconds
        self.imageMode = imageMode
        self.skippedStages = skippedStages
        self.candidates = candidates
        self.words = words
        self.minTextHeight = minTextHeight
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [("lang", JSON(languages.joined(separator: "+")))]
        if let timeoutMilliseconds { fields.append(("timeout_ms", JSON(timeoutMilliseconds))) }
        if imageMode != "gray" { fields.append(("mode", JSON(imageMode))) }
        if !skippedStages.isEmpty { fields.append(("skip", .array(skippedStages.map { JSON($0) }))) }
        if candidates > 0 { fields.append(("candidates", JSON(candidates))) }
        if !words.isEmpty { fields.append(("words", .array(words.map { JSON($0) }))) }
        if let minTextHeight { fields.append(("min_text_height", .rounded(minTextHeight, places: 4))) }
        return .object(fields)
    }

    /// Reads options written by `json`; unknown keys are ignored, so newer submitters stay readable.
    public init(json: JSON?) {
        let lang = json?["lang"]?.stringValue ?? "eng"
        languages = lang.split(separator: "+").map(String.init).filter { !$0.isEmpty }
        if languages.isEmpty { languages = ["eng"] }
        timeoutMilliseconds = json?["timeout_ms"]?.intValue
        let mode = json?["mode"]?.stringValue ?? "gray"
        imageMode = Self.imageModes.contains(mode) ? mode : "gray"
        skippedStages = (json?["skip"]?.arrayValue ?? []).compactMap(\.stringValue).filter { Self.correctionStages.contains($0) }
        candidates = min(Self.maximumCandidates, max(0, json?["candidates"]?.intValue ?? 0))
        words = Array((json?["words"]?.arrayValue ?? []).compactMap(\.stringValue).filter { !$0.isEmpty }.prefix(Self.maximumWords))
        minTextHeight = json?["min_text_height"]?.doubleValue.flatMap { (0..<1).contains($0) && $0 > 0 ? $0 : nil }
    }
}
