/// A page's reading as the store keeps it to render it later (issue 19, render on demand): the whole result model
/// at full precision (words, boxes, confidences, candidates, the map to the original image, the stages' findings,
/// language, keywords, quality, timings) and what its documents name (`RenderContext`), so that `export` and
/// `serve` render hOCR, ALTO, PAGE and the page JSON byte for byte as the worker would have at OCR time.
///
/// Numbers are written as Swift prints them (the shortest text that reads back as the same double): the renderers
/// round confidences themselves (hOCR to a whole number, ALTO and PAGE to thousandths), and a confidence rounded
/// once already could round the other way. The page's text is not in it (the store keeps it beside).
public struct PageModel: Sendable, Equatable {
    /// The version of this encoding: raised when a field changes meaning or goes away.
    public static let version = 1

    public var result: PageResult
    public var context: RenderContext

    public init(result: PageResult, context: RenderContext) {
        self.result = result
        self.context = context
    }

    /// The model as compact JSON (the page's text left out).
    public var json: JSON {
        let r = result
        var fields: [(String, JSON)] = [
            ("model", JSON(Self.version)),
            ("render", context.json),
            ("width", JSON(r.width)), ("height", JSON(r.height)), ("resolution", JSON(r.resolution)),
            ("mean_confidence", JSON(r.meanConfidence)),
            ("language", JSON(r.language)),
            ("keywords", .array(r.keywords.map { .string($0) })),
            ("blocks", .array(r.blocks.map(Self.block))),
            ("timings", .array(r.timings.map { [JSON($0.stage), JSON($0.milliseconds)] })),
        ]
        if let engine = r.engine { fields.append(("engine", JSON(engine))) }
        if r.findings != .null { fields.append(("stages", r.findings)) }
        if let quality = r.quality { fields.append(("quality", quality.json)) }
        if let toOriginal = r.toOriginal { fields.append(("to_original", .array(toOriginal.m.map { JSON($0) }))) }
        if let width = r.originalWidth, let height = r.originalHeight { fields.append(("original_size", [JSON(width), JSON(height)])) }
        return .object(fields)
    }

    /// Reads a model written by `json`, with the page's `text`; nil when `json` is not one (every box and the map
    /// are checked, so a model that reads back can be rendered).
    public init?(json: JSON, text: String) {
        guard json["model"]?.intValue == Self.version, let context = RenderContext(json: json["render"]),
              let width = json["width"]?.intValue, let height = json["height"]?.intValue, width >= 0, height >= 0,
              let blocks = json["blocks"]?.arrayValue, let timings = json["timings"]?.arrayValue else { return nil }
        var decoded: [Block] = []
        decoded.reserveCapacity(blocks.count)
        for block in blocks {
            guard let block = Self.block(block) else { return nil }
            decoded.append(block)
        }
        var stageTimings: [StageTiming] = []
        for timing in timings {
            guard let pair = timing.arrayValue, pair.count == 2, let stage = pair[0].stringValue, let ms = pair[1].doubleValue
            else { return nil }
            stageTimings.append(StageTiming(stage: stage, milliseconds: ms))
        }
        var result = PageResult(width: width, height: height, resolution: json["resolution"]?.intValue ?? 0, text: text,
                                meanConfidence: json["mean_confidence"]?.doubleValue ?? 0, blocks: decoded, timings: stageTimings)
        result.language = json["language"]?.stringValue
        result.keywords = json["keywords"]?.arrayValue?.compactMap(\.stringValue) ?? []
        result.findings = json["stages"] ?? .null
        result.engine = json["engine"]?.stringValue
        if let quality = json["quality"] {
            guard let read = PageQuality(json: quality) else { return nil }
            result.quality = read
        }
        if let map = json["to_original"] {
            guard let items = map.arrayValue, items.count == 9 else { return nil }
            let m = items.compactMap(\.doubleValue)
            guard m.count == 9, m.allSatisfy(\.isFinite) else { return nil }
            result.toOriginal = Homography(m)
        }
        if let size = json["original_size"] {
            guard let items = size.arrayValue, items.count == 2, let w = items[0].intValue, let h = items[1].intValue,
                  w >= 0, h >= 0 else { return nil }
            (result.originalWidth, result.originalHeight) = (w, h)
        }
        self.init(result: result, context: context)
    }

    /// Reads a model from the JSON text `json` writes, with the page's `text`, as `init?(json:text:)` reads its tree
    /// but without building it (render on demand reads a model for every page it renders); nil when it is not one.
    public init?(bytes: [UInt8], text: String) {
        var reader = JSONReader(bytes)
        var version: Int?, context: RenderContext?, width: Int?, height: Int?, resolution = 0, meanConfidence = 0.0
        var language: String?, keywords: [String] = [], blocks: [Block]?, timings: [StageTiming]?
        var findings = JSON.null, quality: PageQuality?, toOriginal: Homography?, originalSize: (Int, Int)?
        var engine: String?
        do {
            try reader.object { reader, key in
                switch key {
                case "model": version = try reader.value().intValue
                case "render": context = RenderContext(json: try reader.value())
                case "width": width = try reader.value().intValue
                case "height": height = try reader.value().intValue
                case "resolution": resolution = try reader.value().intValue ?? 0
                case "mean_confidence": meanConfidence = try reader.value().doubleValue ?? 0
                case "language": language = try reader.value().stringValue
                case "keywords": keywords = try reader.value().arrayValue?.compactMap(\.stringValue) ?? []
                case "blocks": blocks = try Self.blocks(&reader)
                case "timings":
                    guard let items = try reader.value().arrayValue else { throw reader.failure("timings") }
                    timings = try items.map { timing in
                        guard let pair = timing.arrayValue, pair.count == 2, let stage = pair[0].stringValue,
                              let ms = pair[1].doubleValue else { throw reader.failure("a timing") }
                        return StageTiming(stage: stage, milliseconds: ms)
                    }
                case "stages": findings = try reader.value()
                case "engine": engine = try reader.value().stringValue
                case "quality":
                    guard let read = PageQuality(json: try reader.value()) else { throw reader.failure("quality") }
                    quality = read
                case "to_original":
                    guard let items = try reader.value().arrayValue, items.count == 9 else { throw reader.failure("to_original") }
                    let m = items.compactMap(\.doubleValue)
                    guard m.count == 9, m.allSatisfy(\.isFinite) else { throw reader.failure("to_original") }
                    toOriginal = Homography(m)
                case "original_size":
                    guard let items = try reader.value().arrayValue, items.count == 2, let w = items[0].intValue,
                          let h = items[1].intValue, w >= 0, h >= 0 else { throw reader.failure("original_size") }
                    originalSize = (w, h)
                default: _ = try reader.value()
                }
            }
            guard reader.isAtEnd() else { return nil }
        } catch {
            return nil
        }
        guard version == Self.version, let context, let width, let height, width >= 0, height >= 0, let blocks, let timings
        else { return nil }
        var result = PageResult(width: width, height: height, resolution: resolution, text: text, meanConfidence: meanConfidence,
                                blocks: blocks, timings: timings)
        result.language = language
        result.keywords = keywords
        result.findings = findings
        result.engine = engine
        result.quality = quality
        result.toOriginal = toOriginal
        if let size = originalSize { (result.originalWidth, result.originalHeight) = (size.0, size.1) }
        self.init(result: result, context: context)
    }

    private static func blocks(_ reader: inout JSONReader) throws -> [Block] {
        var blocks: [Block] = []
        try reader.array { reader in
            var box: Rect?, kind: String?, paragraphs: [Paragraph]?
            try reader.object { reader, key in
                switch key {
                case "box": box = try rect(&reader)
                case "kind": kind = try reader.value().stringValue
                case "paragraphs":
                    var items: [Paragraph] = []
                    try reader.array { reader in items.append(try paragraph(&reader)) }
                    paragraphs = items
                default: _ = try reader.value()
                }
            }
            guard let box, let kind, let paragraphs else { throw reader.failure("a block") }
            blocks.append(Block(box: box, kind: kind, paragraphs: paragraphs))
        }
        return blocks
    }

    private static func paragraph(_ reader: inout JSONReader) throws -> Paragraph {
        var box: Rect?, lines: [Line]?
        try reader.object { reader, key in
            switch key {
            case "box": box = try rect(&reader)
            case "lines":
                var items: [Line] = []
                try reader.array { reader in items.append(try line(&reader)) }
                lines = items
            default: _ = try reader.value()
            }
        }
        guard let box, let lines else { throw reader.failure("a paragraph") }
        return Paragraph(box: box, lines: lines)
    }

    private static func line(_ reader: inout JSONReader) throws -> Line {
        var box: Rect?, words: [Word]?
        try reader.object { reader, key in
            switch key {
            case "box": box = try rect(&reader)
            case "words":
                var items: [Word] = []
                items.reserveCapacity(16)
                try reader.array { reader in items.append(try word(&reader)) }
                words = items
            default: _ = try reader.value()
            }
        }
        guard let box, let words else { throw reader.failure("a line") }
        return Line(box: box, words: words)
    }

    private static func word(_ reader: inout JSONReader) throws -> Word {
        var text: String?, box: Rect?, confidence: Double?, candidates: [Candidate] = [], language: String?, dictionary = false
        // The keys are one letter: told apart by their byte (`object(keyBytes:)`), a page has hundreds of words.
        try reader.object(keyBytes: { reader, key in
            switch key.count == 1 ? key[0] : 0 {
            case UInt8(ascii: "t"): text = try reader.string()
            case UInt8(ascii: "b"): box = try rect(&reader)
            case UInt8(ascii: "c"): confidence = try reader.double()
            case UInt8(ascii: "a"):
                candidates.reserveCapacity(4)
                try reader.array { reader in
                    var pair: (String, Double)?
                    var index = 0
                    try reader.array { reader in
                        switch index {
                        case 0: pair = (try reader.string(), 0)
                        case 1: pair?.1 = try reader.double()
                        default: throw reader.failure("a candidate")
                        }
                        index += 1
                    }
                    guard index == 2, let pair else { throw reader.failure("a candidate") }
                    candidates.append(Candidate(text: pair.0, confidence: pair.1))
                }
            case UInt8(ascii: "l"): language = try reader.value().stringValue
            case UInt8(ascii: "d"): dictionary = try reader.value().boolValue ?? false
            default: _ = try reader.value()
            }
        })
        guard let text, let box, let confidence, confidence.isFinite else { throw reader.failure("a word") }
        return Word(text: text, box: box, confidence: confidence, candidates: candidates, language: language,
                    fromDictionary: dictionary)
    }

    /// [x, y, width, height], whole numbers.
    private static func rect(_ reader: inout JSONReader) throws -> Rect {
        var values = (0, 0, 0, 0)
        var index = 0
        try reader.array { reader in
            let value = try reader.int()
            switch index {
            case 0: values.0 = value
            case 1: values.1 = value
            case 2: values.2 = value
            case 3: values.3 = value
            default: throw reader.failure("a box has four numbers")
            }
            index += 1
        }
        guard index == 4 else { throw reader.failure("a box has four numbers") }
        return Rect(x: values.0, y: values.1, width: values.2, height: values.3)
    }

    // Blocks, paragraphs and lines: {"box", "kind" (blocks), "paragraphs" | "lines" | "words"}; a word
    // {"t": text, "b": box, "c": confidence, "a": [[text, confidence]…] (candidates), "l": language, "d": true (dictionary)}.

    private static func block(_ block: Block) -> JSON {
        .object([("box", block.box.json), ("kind", JSON(block.kind)), ("paragraphs", .array(block.paragraphs.map { paragraph in
            .object([("box", paragraph.box.json), ("lines", .array(paragraph.lines.map { line in
                .object([("box", line.box.json), ("words", .array(line.words.map(word)))])
            }))])
        }))])
    }

    private static func word(_ word: Word) -> JSON {
        var fields: [(String, JSON)] = [("t", JSON(word.text)), ("b", word.box.json), ("c", JSON(word.confidence))]
        if !word.candidates.isEmpty { fields.append(("a", .array(word.candidates.map { [JSON($0.text), JSON($0.confidence)] }))) }
        if let language = word.language { fields.append(("l", JSON(language))) }
        if word.fromDictionary { fields.append(("d", true)) }
        return .object(fields)
    }

    private static func block(_ json: JSON) -> Block? {
        guard let box = Rect(json: json["box"]), let kind = json["kind"]?.stringValue, let items = json["paragraphs"]?.arrayValue
        else { return nil }
        var paragraphs: [Paragraph] = []
        for item in items {
            guard let box = Rect(json: item["box"]), let lineItems = item["lines"]?.arrayValue else { return nil }
            var lines: [Line] = []
            for lineItem in lineItems {
                guard let box = Rect(json: lineItem["box"]), let wordItems = lineItem["words"]?.arrayValue else { return nil }
                var words: [Word] = []
                words.reserveCapacity(wordItems.count)
                for wordItem in wordItems {
                    guard let word = word(wordItem) else { return nil }
                    words.append(word)
                }
                lines.append(Line(box: box, words: words))
            }
            paragraphs.append(Paragraph(box: box, lines: lines))
        }
        return Block(box: box, kind: kind, paragraphs: paragraphs)
    }

    private static func word(_ json: JSON) -> Word? {
        guard let text = json["t"]?.stringValue, let box = Rect(json: json["b"]), let confidence = json["c"]?.doubleValue,
              confidence.isFinite else { return nil }
        var candidates: [Candidate] = []
        if let items = json["a"] {
            guard let items = items.arrayValue else { return nil }
            for item in items {
                guard let pair = item.arrayValue, pair.count == 2, let text = pair[0].stringValue,
                      let confidence = pair[1].doubleValue else { return nil }
                candidates.append(Candidate(text: text, confidence: confidence))
            }
        }
        return Word(text: text, box: box, confidence: confidence, candidates: candidates, language: json["l"]?.stringValue,
                    fromDictionary: json["d"]?.boolValue ?? false)
    }
}

/// What a page's documents name besides its reading, fixed when the page was read: the page as the worker knew it
/// (`source`, `page` from 1), the languages it was asked to read in, when it was read, and the software that read
/// it (`DocumentCreator.version`: ocrfarm's version with the engine's).
public struct RenderContext: Sendable, Equatable {
    public var source: String
    public var page: Int
    public var languages: [String]
    /// Seconds since 1970 (PAGE's `Created`).
    public var created: Double
    /// "0.9.0 (tesseract 5.3.0)".
    public var creator: String

    public init(source: String, page: Int, languages: [String], created: Double, creator: String) {
        self.source = source
        self.page = page
        self.languages = languages
        self.created = created
        self.creator = creator
    }

    public var json: JSON {
        .object([("source", JSON(source)), ("page", JSON(page)), ("languages", .array(languages.map { JSON($0) })),
                 ("created", JSON(created)), ("creator", JSON(creator))])
    }

    public init?(json: JSON?) {
        guard let json, let source = json["source"]?.stringValue, let page = json["page"]?.intValue,
              let languages = json["languages"]?.arrayValue?.compactMap(\.stringValue), !languages.isEmpty,
              let created = json["created"]?.doubleValue, created.isFinite, let creator = json["creator"]?.stringValue
        else { return nil }
        self.init(source: source, page: page, languages: languages, created: created, creator: creator)
    }
}
