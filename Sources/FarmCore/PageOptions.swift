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

    public static let correctionStages = ["segment", "orient", "deskew", "scale", "enhance"]
    public static let imageModes = ["color", "gray", "bw"]

    public init(languages: [String] = ["eng"], timeoutMilliseconds: Int? = nil, imageMode: String = "gray",
                skippedStages: [String] = [])
    {
        self.languages = languages
        self.timeoutMilliseconds = timeoutMilliseconds
        self.imageMode = imageMode
        self.skippedStages = skippedStages
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [("lang", JSON(languages.joined(separator: "+")))]
        if let timeoutMilliseconds { fields.append(("timeout_ms", JSON(timeoutMilliseconds))) }
        if imageMode != "gray" { fields.append(("mode", JSON(imageMode))) }
        if !skippedStages.isEmpty { fields.append(("skip", .array(skippedStages.map { JSON($0) }))) }
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
    }
}
