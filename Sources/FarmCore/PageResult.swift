/// A rectangle in pixels, origin top left, y down.
public struct Rect: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    /// The smallest rectangle holding both.
    public func union(_ other: Rect) -> Rect {
        let left = min(x, other.x), top = min(y, other.y)
        return Rect(x: left, y: top, width: max(maxX, other.maxX) - left, height: max(maxY, other.maxY) - top)
    }

    /// The smallest rectangle holding all of `boxes`; `empty` when there are none.
    public static func enclosing(_ boxes: [Rect], or empty: Rect = Rect(x: 0, y: 0, width: 0, height: 0)) -> Rect {
        boxes.dropFirst().reduce(boxes.first ?? empty) { $0.union($1) }
    }
    /// [x, y, width, height]
    public var json: JSON { [JSON(x), JSON(y), JSON(width), JSON(height)] }

    public init?(json: JSON?) {
        guard let items = json?.arrayValue, items.count == 4,
              let x = items[0].intValue, let y = items[1].intValue, let w = items[2].intValue, let h = items[3].intValue
        else { return nil }
        self.init(x: x, y: y, width: w, height: h)
    }
}

/// One reading of a word with its confidence (0–100).
public struct Candidate: Sendable, Equatable {
    public let text: String
    public let confidence: Double

    public init(text: String, confidence: Double) {
        self.text = text
        self.confidence = confidence
    }
}

/// A recognized word.
public struct Word: Sendable, Equatable {
    public var text: String
    /// Box on the corrected page (the image that was recognized).
    public var box: Rect
    public var confidence: Double
    /// Alternative readings, best first (empty unless requested).
    public var candidates: [Candidate]
    public var language: String?
    /// Whether the engine found the word in its language's word list (Tesseract's own dictionaries): the page's
    /// quality figure counts these (`PageQuality`).
    public var fromDictionary: Bool

    public init(text: String, box: Rect, confidence: Double, candidates: [Candidate] = [], language: String? = nil,
                fromDictionary: Bool = false)
    {
        self.text = text
        self.box = box
        self.confidence = confidence
        self.candidates = candidates
        self.language = language
        self.fromDictionary = fromDictionary
    }
}

/// A text line and its words in reading order.
public struct Line: Sendable, Equatable {
    public var box: Rect
    public var words: [Word]

    public init(box: Rect, words: [Word]) {
        self.box = box
        self.words = words
    }

    /// The words joined as the page's text joins them (no space between Chinese or Japanese words).
    public var text: String { Scripts.join(words.map { Scripts.trimmed($0.text) }) }
}

/// A paragraph of lines.
public struct Paragraph: Sendable, Equatable {
    public var box: Rect
    public var lines: [Line]

    public init(box: Rect, lines: [Line]) {
        self.box = box
        self.lines = lines
    }
}

/// A layout block (a column, a heading, a caption…).
public struct Block: Sendable, Equatable {
    public var box: Rect
    public var kind: String
    public var paragraphs: [Paragraph]

    public init(box: Rect, kind: String, paragraphs: [Paragraph]) {
        self.box = box
        self.kind = kind
        self.paragraphs = paragraphs
    }
}

/// How long one stage of the pipeline took on a page.
public struct StageTiming: Sendable, Equatable {
    public let stage: String
    public let milliseconds: Double

    public init(stage: String, milliseconds: Double) {
        self.stage = stage
        self.milliseconds = milliseconds
    }
}

/// Everything known about one recognized page.
public struct PageResult: Sendable, Equatable {
    /// Size of the recognized (corrected) page image.
    public var width: Int
    public var height: Int
    /// Pixels per inch of the recognized image.
    public var resolution: Int
    public var text: String
    public var meanConfidence: Double
    public var blocks: [Block]
    public var timings: [StageTiming]
    /// What each stage of the pipeline found (decode, segment, rectify, orient, deskew, enhance).
    public var findings: JSON = .null
    /// Corrected page → original image, when the page was corrected (nil: the same coordinates).
    public var toOriginal: Homography?
    public var originalWidth: Int?
    public var originalHeight: Int?
    /// The page's language, one of the languages it was read in (its text's main script decides); nil when the
    /// text has no words or the page was not analyzed. Each `Word` may carry its own.
    public var language: String?
    /// Words to find the page by, in order of first appearance (FarmAnalysis `Keywords`).
    public var keywords: [String] = []
    /// How far the reading can be trusted, with its parts and the worst line (`PageQuality`); nil when not measured.
    public var quality: PageQuality?
    /// The engine that read the page, with its version ("tesseract 5.3.0", "PP-OCRv6-small+tiny (onnxruntime 1.32.0)");
    /// nil when nothing read it (the null engine, a PDF page's own text kept).
    public var engine: String?

    public init(width: Int, height: Int, resolution: Int, text: String, meanConfidence: Double,
                blocks: [Block], timings: [StageTiming] = [])
    {
        self.width = width
        self.height = height
        self.resolution = resolution
        self.text = text
        self.meanConfidence = meanConfidence
        self.blocks = blocks
        self.timings = timings
    }

    /// An empty page (no text found).
    public static func empty(width: Int, height: Int, resolution: Int) -> PageResult {
        PageResult(width: width, height: height, resolution: resolution, text: "", meanConfidence: 0, blocks: [])
    }

    public var lines: [Line] { blocks.flatMap { $0.paragraphs.flatMap(\.lines) } }
    public var words: [Word] { lines.flatMap(\.words) }

    /// The four corners of a box on the corrected page, in the original image (a quadrilateral after a
    /// perspective correction); the box's own corners when the page was not corrected.
    public func originalQuad(of box: Rect) -> Quad {
        let corners = [Point(Double(box.x), Double(box.y)), Point(Double(box.maxX), Double(box.y)),
                       Point(Double(box.maxX), Double(box.maxY)), Point(Double(box.x), Double(box.maxY))]
        guard let toOriginal else { return Quad(corners) }
        return Quad(corners.map { toOriginal.apply($0) })
    }

    /// The page as JSON: size, text, mean confidence, language, keywords, quality, words with boxes (on the corrected page, and as corners in
    /// the original image when the page was corrected), lines, stage findings, timings.
    public var json: JSON {
        var fields: [(String, JSON)] = [
            ("width", JSON(width)),
            ("height", JSON(height)),
            ("resolution", JSON(resolution)),
            ("text", JSON(text)),
            ("mean_confidence", .rounded(meanConfidence)),
            ("language", JSON(language)),
            ("keywords", .array(keywords.map { .string($0) })),
            ("words", .array(words.map { word in
                guard toOriginal != nil, case .object(var fields) = word.json else { return word.json }
                fields.append(("original", originalQuad(of: word.box).json))
                return .object(fields)
            })),
            ("lines", .array(lines.map { .object([("box", $0.box.json), ("text", JSON($0.text))]) })),
        ]
        if let engine { fields.insert(("engine", JSON(engine)), at: 5) }
        if let originalWidth, let originalHeight {
            fields.append(("original_size", [JSON(originalWidth), JSON(originalHeight)]))
        }
        if let toOriginal { fields.append(("to_original", toOriginal.json)) }
        if findings != .null { fields.append(("stages", findings)) }
        if let quality { fields.append(("quality", quality.json)) }
        fields.append(("timings_ms", .object(timings.map { ($0.stage, .rounded($0.milliseconds, places: 1)) })))
        return .object(fields)
    }
}

extension Word {
    public var json: JSON {
        var fields: [(String, JSON)] = [
            ("text", JSON(text)),
            ("box", box.json),
            ("confidence", .rounded(confidence)),
        ]
        if let language { fields.append(("language", JSON(language))) }
        if fromDictionary { fields.append(("dictionary", true)) }
        if !candidates.isEmpty {
            fields.append(("candidates", .array(candidates.map {
                .object([("text", JSON($0.text)), ("confidence", .rounded($0.confidence))])
            })))
        }
        return .object(fields)
    }
}

// MARK: - Reading results back

extension PageResult {
    /// Reads a page written by `json` (words, lines and blocks are rebuilt from the stored structure).
    public init?(json: JSON) {
        guard let width = json["width"]?.intValue, let height = json["height"]?.intValue else { return nil }
        let blocks = json["blocks"]?.arrayValue?.compactMap(Block.init(json:))
        self.init(width: width, height: height, resolution: json["resolution"]?.intValue ?? 0,
                  text: json["text"]?.stringValue ?? "", meanConfidence: json["mean_confidence"]?.doubleValue ?? 0,
                  blocks: blocks ?? [],
                  timings: json["timings_ms"]?.objectValue?.map { StageTiming(stage: $0.0, milliseconds: $0.1.doubleValue ?? 0) } ?? [])
        language = json["language"]?.stringValue
        keywords = json["keywords"]?.arrayValue?.compactMap(\.stringValue) ?? []
        quality = PageQuality(json: json["quality"])
        engine = json["engine"]?.stringValue
    }

    /// The full structure (blocks → paragraphs → lines → words), the page's language and keywords as JSON, for storage.
    public var structureJSON: JSON {
        var fields: [(String, JSON)] = [
            ("width", JSON(width)),
            ("height", JSON(height)),
            ("resolution", JSON(resolution)),
            ("mean_confidence", .rounded(meanConfidence)),
            ("language", JSON(language)),
            ("keywords", .array(keywords.map { .string($0) })),
            ("blocks", .array(blocks.map(\.json))),
            ("timings_ms", .object(timings.map { ($0.stage, .rounded($0.milliseconds, places: 1)) })),
        ]
        if let quality { fields.insert(("quality", quality.json), at: 6) }
        if let engine { fields.insert(("engine", JSON(engine)), at: 4) }
        // A warning the store's reports read without the page model (`run`'s summary, `review`).
        if let missing = findings[Self.missingLanguageKey], missing != .null { fields.append((Self.missingLanguageKey, missing)) }
        return .object(fields)
    }

    /// The stage finding, and structure key, of a page in a script no installed language reads (FarmPipeline's
    /// `MissingLanguage`): {script, script_confidence, languages, package, read_with, message}.
    public static let missingLanguageKey = "missing_language"

    /// `structureJSON` without its blocks, what the store keeps beside a page's model (`PageModel`, which has them),
    /// with the page's place on the original image as the page JSON gives it (`original_size`, `to_original`), for
    /// readers that place it there without the model (IIIF).
    public var summaryJSON: JSON {
        guard case .object(var fields) = structureJSON else { return structureJSON }
        fields.removeAll { $0.0 == "blocks" }
        if let originalWidth, let originalHeight { fields.append(("original_size", [JSON(originalWidth), JSON(originalHeight)])) }
        if let toOriginal { fields.append(("to_original", toOriginal.json)) }
        return .object(fields)
    }

    /// `summary` (a stored `summaryJSON`) with this result's blocks put back where `structureJSON` has them.
    public func withBlocks(_ summary: JSON) -> JSON {
        guard case .object(var fields) = summary else { return summary }
        let blocks: (String, JSON) = ("blocks", .array(self.blocks.map(\.json)))
        if let timings = fields.firstIndex(where: { $0.0 == "timings_ms" }) {
            fields.insert(blocks, at: timings)
        } else {
            fields.append(blocks)
        }
        return .object(fields)
    }
}

extension Block {
    public var json: JSON {
        .object([("box", box.json), ("kind", JSON(kind)), ("paragraphs", .array(paragraphs.map(\.json)))])
    }

    public init?(json: JSON) {
        guard let box = Rect(json: json["box"]) else { return nil }
        self.init(box: box, kind: json["kind"]?.stringValue ?? "text",
                  paragraphs: json["paragraphs"]?.arrayValue?.compactMap(Paragraph.init(json:)) ?? [])
    }
}

extension Paragraph {
    public var json: JSON { .object([("box", box.json), ("lines", .array(lines.map(\.json)))]) }

    public init?(json: JSON) {
        guard let box = Rect(json: json["box"]) else { return nil }
        self.init(box: box, lines: json["lines"]?.arrayValue?.compactMap(Line.init(json:)) ?? [])
    }
}

extension Line {
    public var json: JSON { .object([("box", box.json), ("words", .array(words.map(\.json)))]) }

    public init?(json: JSON) {
        guard let box = Rect(json: json["box"]) else { return nil }
        self.init(box: box, words: json["words"]?.arrayValue?.compactMap(Word.init(json:)) ?? [])
    }
}

extension Word {
    public init?(json: JSON) {
        guard let text = json["text"]?.stringValue, let box = Rect(json: json["box"]) else { return nil }
        self.init(text: text, box: box, confidence: json["confidence"]?.doubleValue ?? 0,
                  candidates: json["candidates"]?.arrayValue?.compactMap { candidate in
                      candidate["text"]?.stringValue.map { Candidate(text: $0, confidence: candidate["confidence"]?.doubleValue ?? 0) }
                  } ?? [],
                  language: json["language"]?.stringValue, fromDictionary: json["dictionary"]?.boolValue ?? false)
    }
}

extension PageResult {
    /// Changes every line in place, in model order (blocks, paragraphs, lines).
    public mutating func updateLines(_ update: (inout Line) -> Void) {
        for b in blocks.indices {
            for p in blocks[b].paragraphs.indices {
                for l in blocks[b].paragraphs[p].lines.indices { update(&blocks[b].paragraphs[p].lines[l]) }
            }
        }
    }

    /// Drops the lines `drop` picks, and the paragraphs and blocks that are left without lines.
    public mutating func removeLines(where drop: (Line) -> Bool) {
        blocks = blocks.compactMap { block in
            var block = block
            block.paragraphs = block.paragraphs.compactMap { paragraph in
                var paragraph = paragraph
                paragraph.lines.removeAll(where: drop)
                return paragraph.lines.isEmpty ? nil : paragraph
            }
            return block.paragraphs.isEmpty ? nil : block
        }
    }

    /// Drops the words `drop` picks, and the lines, paragraphs and blocks that are left without words.
    public mutating func removeWords(where drop: (Word) -> Bool) {
        updateLines { $0.words.removeAll(where: drop) }
        removeLines { $0.words.isEmpty }
    }

    /// Puts the paragraphs in reading order (`ReadingOrder`), columns found by gutters at least one median line height wide;
    /// paragraphs of one engine block stay together where they stay adjacent. Two columns that make rows (`RowLayout`)
    /// become one paragraph of their lines, row by row. Returns whether anything moved.
    @discardableResult
    public mutating func arrangeInReadingOrder() -> Bool {
        let paragraphs = blocks.enumerated().flatMap { b, block in block.paragraphs.map { (block: b, paragraph: $0) } }
        guard paragraphs.count > 1 else { return false }
        let heights = lines.map(\.box.height).sorted()
        let lineHeight = heights.isEmpty ? 1 : heights[heights.count / 2]
        let shapes = paragraphs.map { $0.paragraph.lines.map { ReadingOrder.LineShape(box: $0.box, words: $0.words.count) } }
        let parts = ReadingOrder.order(paragraphs.map(\.paragraph.box), lines: shapes, lineHeight: lineHeight)
        /// The paragraph a part is, when it is one whole paragraph.
        func wholeParagraph(_ part: ReadingOrder.Part) -> Int? {
            guard let region = part.first?.region, part.allSatisfy({ $0.region == region }) else { return nil }
            return region
        }
        let wholes = parts.map(wholeParagraph)
        guard wholes.contains(nil) || wholes.map({ $0 ?? -1 }) != Array(paragraphs.indices) else { return false }
        var arranged: [Block] = []
        var lastBlock = -1
        for (part, whole) in zip(parts, wholes) {
            guard let index = whole else {
                // Rows: one paragraph of the lines of both columns, in a block of its own (of the first line's kind).
                let rowLines = part.map { paragraphs[$0.region].paragraph.lines[$0.line] }
                let box = Rect.enclosing(rowLines.map(\.box))
                arranged.append(Block(box: box, kind: blocks[paragraphs[part[0].region].block].kind, paragraphs: [Paragraph(box: box, lines: rowLines)]))
                lastBlock = -1
                continue
            }
            let (b, paragraph) = paragraphs[index]
            if b == lastBlock, var block = arranged.popLast() {
                block.paragraphs.append(paragraph)
                block.box = block.box.union(paragraph.box)
                arranged.append(block)
            } else {
                arranged.append(Block(box: paragraph.box, kind: blocks[b].kind, paragraphs: [paragraph]))
            }
            lastBlock = b
        }
        blocks = arranged
        return true
    }
}

extension PageResult {
    /// The same reading with every box the union of its children: a line of its words, a paragraph of its lines,
    /// a block of its paragraphs (an element without children keeps its box). Readers check that a box holds its
    /// children (OCR-D's PAGE validator, hocr-check), and a paragraph split from a block must not keep the block's box.
    public func enclosingBoxes() -> PageResult {
        var result = self
        result.blocks = blocks.map { block in
            var block = block
            block.paragraphs = block.paragraphs.map { paragraph in
                var paragraph = paragraph
                paragraph.lines = paragraph.lines.map { line in
                    var line = line
                    line.box = Rect.enclosing(line.words.map(\.box), or: line.box)
                    return line
                }
                paragraph.box = Rect.enclosing(paragraph.lines.map(\.box), or: paragraph.box)
                return paragraph
            }
            block.box = Rect.enclosing(block.paragraphs.map(\.box), or: block.box)
            return block
        }
        return result
    }
}

extension Line {
    /// Mean word confidence weighted by word length (0 for an empty line).
    public var confidence: Double {
        let weights = words.map { Double(max(1, $0.text.count)) }
        let total = weights.reduce(0, +)
        return total > 0 ? zip(words, weights).map { $0.confidence * $1 }.reduce(0, +) / total : 0
    }
}

extension Rect {
    /// Intersection over union (0 when apart).
    public func overlapRatio(_ other: Rect) -> Double {
        let w = min(maxX, other.maxX) - max(x, other.x), h = min(maxY, other.maxY) - max(y, other.y)
        guard w > 0, h > 0 else { return 0 }
        let inter = Double(w * h)
        return inter / (Double(width * height) + Double(other.width * other.height) - inter)
    }
}

extension PageResult {
    /// Takes the words of another reading of the same page, line by line, where it read the same line (boxes
    /// overlapping by `overlap` at least) with a confidence higher by `margin` points. Returns the lines taken.
    @discardableResult
    public mutating func adoptSurerLines(from other: PageResult, overlap: Double = 0.7, margin: Double = 2) -> Int {
        let others = other.lines.filter { !$0.words.isEmpty }
        var taken = 0
        updateLines { line in
            guard let best = others.max(by: { line.box.overlapRatio($0.box) < line.box.overlapRatio($1.box) }),
                  line.box.overlapRatio(best.box) >= overlap, best.confidence > line.confidence + margin else { return }
            line.words = best.words
            taken += 1
        }
        return taken
    }
}

extension Rect {
    /// The rectangle in an image scaled by `factor` (rounded outwards).
    public func scaled(by factor: Double) -> Rect {
        let left = Int((Double(x) * factor).rounded(.down)), top = Int((Double(y) * factor).rounded(.down))
        let right = Int((Double(maxX) * factor).rounded(.up)), bottom = Int((Double(maxY) * factor).rounded(.up))
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

extension PageResult {
    /// The same reading with every box in an image scaled by `factor`.
    public func boxesScaled(by factor: Double) -> PageResult {
        boxesTransformed(width: Int((Double(width) * factor).rounded()), height: Int((Double(height) * factor).rounded())) {
            $0.scaled(by: factor)
        }
    }

    /// The same reading in a `width` × `height` image, with every box (block, paragraph, line, word) put through
    /// `transform`.
    public func boxesTransformed(width: Int, height: Int, _ transform: (Rect) -> Rect) -> PageResult {
        var result = self
        result.width = width
        result.height = height
        result.blocks = blocks.map { block in
            var block = block
            block.box = transform(block.box)
            block.paragraphs = block.paragraphs.map { paragraph in
                var paragraph = paragraph
                paragraph.box = transform(paragraph.box)
                paragraph.lines = paragraph.lines.map { line in
                    var line = line
                    line.box = transform(line.box)
                    line.words = line.words.map { word in
                        var word = word
                        word.box = transform(word.box)
                        return word
                    }
                    return line
                }
                return paragraph
            }
            return block
        }
        return result
    }
}
