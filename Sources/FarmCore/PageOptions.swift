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

    public static let correctionStages = ["segment", "orient", "deskew", "scale", "enhance"]
    public static let imageModes = ["color", "gray", "bw"]

    /// The most alternatives a word can carry.
    public static let maximumCandidates = 10

    public init(languages: [String] = ["eng"], timeoutMilliseconds: Int? = nil, imageMode: String = "gray",
                skippedStages: [String] = [], candidates: Int = 0)
    {
        self.languages = languages
        self.timeoutMilliseconds = timeoutMilliseconds
        self.imageMode = imageMode
        self.skippedStages = skippedStages
        self.candidates = candidates
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [("lang", JSON(languages.joined(separator: "+")))]
        if let timeoutMilliseconds { fields.append(("timeout_ms", JSON(timeoutMilliseconds))) }
        if imageMode != "gray" { fields.append(("mode", JSON(imageMode))) }
        if !skippedStages.isEmpty { fields.append(("skip", .array(skippedStages.map { JSON($0) }))) }
        if candidates > 0 { fields.append(("candidates", JSON(candidates))) }
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
    }
}
