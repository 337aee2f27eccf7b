/// How a page is to be read: chosen at submit, stored with the document, carried in every JOB.
public struct PageOptions: Sendable, Equatable {
    /// Languages in priority order.
    public var languages: [String]
    /// Stop recognizing after this many milliseconds (nil: no limit).
    public var timeoutMilliseconds: Int?

    public init(languages: [String] = ["eng"], timeoutMilliseconds: Int? = nil) {
        self.languages = languages
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [("lang", JSON(languages.joined(separator: "+")))]
        if let timeoutMilliseconds { fields.append(("timeout_ms", JSON(timeoutMilliseconds))) }
        return .object(fields)
    }

    /// Reads options written by `json`; unknown keys are ignored, so newer submitters stay readable.
    public init(json: JSON?) {
        let lang = json?["lang"]?.stringValue ?? "eng"
        languages = lang.split(separator: "+").map(String.init).filter { !$0.isEmpty }
        if languages.isEmpty { languages = ["eng"] }
        timeoutMilliseconds = json?["timeout_ms"]?.intValue
    }
}
