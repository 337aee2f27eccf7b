/// How far a page's reading can be trusted, measured from the reading itself (no second OCR pass): one figure
/// 0…1 for sorting (`figure`), the parts it is made of, and the page's worst line. FarmAnalysis `QualityFigure`
/// computes it and gives the formula.
public struct PageQuality: Sendable, Equatable {
    /// The worst line of the page: the line with the lowest confidence, where a page mean hides a bad region.
    public struct Region: Sendable, Equatable {
        /// On the recognized (corrected) page.
        public var box: Rect
        /// 0…1.
        public var confidence: Double
        public var text: String

        public init(box: Rect, confidence: Double, text: String) {
            self.box = box
            self.confidence = confidence
            self.text = text
        }
    }

    /// The weakest text block of the page: the block whose own figure (its words' confidence and dictionary
    /// share, `QualityFigure`) is lowest.
    public struct BlockFigure: Sendable, Equatable {
        /// On the recognized (corrected) page.
        public var box: Rect
        /// 0…1.
        public var figure: Double
        public var words: Int

        public init(box: Rect, figure: Double, words: Int) {
            self.box = box
            self.figure = figure
            self.words = words
        }
    }

    /// 0 (nothing to trust) … 1.
    public var figure: Double
    /// Mean word confidence weighted by word length, 0…1.
    public var confidence: Double
    /// Share of the words the language's word list can vouch for (three letters or more, not numbers) that Tesseract
    /// found in it; nil when the page has none or was read without word lists (Chinese, Japanese, `--no-language-correction`).
    public var dictionary: Double?
    /// Share of the page's ink (dark pixels of the binarized page) that lies in a recognized word's box; nil on a
    /// page without ink.
    public var ink: Double?
    public var words: Int
    public var worst: Region?
    public var worstBlock: BlockFigure?

    public init(figure: Double, confidence: Double, dictionary: Double?, ink: Double?, words: Int, worst: Region?,
                worstBlock: BlockFigure? = nil) {
        self.figure = figure
        self.confidence = confidence
        self.dictionary = dictionary
        self.ink = ink
        self.words = words
        self.worst = worst
        self.worstBlock = worstBlock
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [
            ("figure", .rounded(figure, places: 3)),
            ("confidence", .rounded(confidence, places: 3)),
            ("dictionary", dictionary.map { .rounded($0, places: 3) } ?? .null),
            ("ink", ink.map { .rounded($0, places: 3) } ?? .null),
            ("words", JSON(words)),
        ]
        if let worst {
            fields.append(("worst", .object([("box", worst.box.json), ("confidence", .rounded(worst.confidence, places: 3)),
                                             ("text", JSON(worst.text))])))
        }
        if let worstBlock {
            fields.append(("worst_block", .object([("box", worstBlock.box.json), ("figure", .rounded(worstBlock.figure, places: 3)),
                                                   ("words", JSON(worstBlock.words))])))
        }
        return .object(fields)
    }

    /// Reads `json`'s form back; nil when it is not one (a page stored before quality was measured).
    public init?(json: JSON?) {
        guard let json, let figure = json["figure"]?.doubleValue else { return nil }
        let worst = json["worst"].flatMap { region -> Region? in
            guard let box = Rect(json: region["box"]) else { return nil }
            return Region(box: box, confidence: region["confidence"]?.doubleValue ?? 0, text: region["text"]?.stringValue ?? "")
        }
        let worstBlock = json["worst_block"].flatMap { block -> BlockFigure? in
            guard let box = Rect(json: block["box"]), let figure = block["figure"]?.doubleValue else { return nil }
            return BlockFigure(box: box, figure: figure, words: block["words"]?.intValue ?? 0)
        }
        self.init(figure: figure, confidence: json["confidence"]?.doubleValue ?? 0, dictionary: json["dictionary"]?.doubleValue,
                  ink: json["ink"]?.doubleValue, words: json["words"]?.intValue ?? 0, worst: worst, worstBlock: worstBlock)
    }
}
