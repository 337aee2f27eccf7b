import FarmCore

/// The text a PDF page has of its own, with where each word is: `pdftotext -bbox-layout`'s XHTML read into the page
/// model, so a page kept as it is (`--pdf-text skip`) has word boxes like a page that was read (the viewer, hOCR,
/// ALTO, PAGE and search hits show them).
///
/// Poppler groups the page into flows (columns, in its reading order), blocks and lines of words, each with a box in
/// points from the top left of the page as shown (its /Rotate applied). A flow becomes a block of the model, a
/// poppler block a paragraph. Words are the file's own characters, so their confidence is 100.
enum PDFTextLayout {
    /// The blocks of `xhtml` (one page of `pdftotext -bbox-layout`), boxes rounded outwards to whole points and
    /// clipped to `width` × `height`. Elements without a word are left out; anything not in poppler's shape (a
    /// missing or unreadable coordinate) drops that element, never the page.
    static func blocks(_ xhtml: String, width: Int, height: Int) -> [Block] {
        var blocks: [Block] = []
        var flow: [Paragraph] = []
        var paragraph: [Line] = []
        var line: [Word] = []
        func endLine() {
            if !line.isEmpty { paragraph.append(Line(box: Rect.enclosing(line.map(\.box)), words: line)) }
            line = []
        }
        func endParagraph() {
            endLine()
            if !paragraph.isEmpty { flow.append(Paragraph(box: Rect.enclosing(paragraph.map(\.box)), lines: paragraph)) }
            paragraph = []
        }
        func endFlow() {
            endParagraph()
            if !flow.isEmpty { blocks.append(Block(box: Rect.enclosing(flow.map(\.box)), kind: "text", paragraphs: flow)) }
            flow = []
        }
        var rest = Substring(xhtml)
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            guard let close = rest.firstIndex(of: ">") else { break }
            let tag = rest[..<close]
            rest = rest[rest.index(after: close)...]
            let name = tag.prefix { $0 != " " && $0 != "/" }
            switch name {
            case "flow": endFlow()
            case "block": endParagraph()
            case "line": endLine()
            case "word":
                let end = rest.firstRange(of: "</word>")?.lowerBound ?? rest.endIndex
                let text = decoded(rest[..<end])
                rest = rest[end...]
                guard !text.allSatisfy(\.isWhitespace), let box = box(tag, width: width, height: height) else { continue }
                line.append(Word(text: text, box: box, confidence: 100))
            default: continue
            }
        }
        endFlow()
        return blocks
    }

    /// The box of an element's `xMin`, `yMin`, `xMax` and `yMax`, in whole points, inside the page.
    private static func box(_ tag: Substring, width: Int, height: Int) -> Rect? {
        guard let xMin = attribute("xMin", of: tag), let yMin = attribute("yMin", of: tag),
              let xMax = attribute("xMax", of: tag), let yMax = attribute("yMax", of: tag),
              xMin.isFinite, yMin.isFinite, xMax.isFinite, yMax.isFinite else { return nil }
        let limit = Double(max(width, height)) * 2
        let left = Int(min(max(xMin, 0), Double(width)).rounded(.down))
        let top = Int(min(max(yMin, 0), Double(height)).rounded(.down))
        let right = Int(min(max(xMax, 0), Double(width), limit).rounded(.up))
        let bottom = Int(min(max(yMax, 0), Double(height), limit).rounded(.up))
        guard right > left, bottom > top else { return nil }
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    private static func attribute(_ name: String, of tag: Substring) -> Double? {
        guard let start = tag.firstRange(of: " \(name)=\"")?.upperBound,
              let end = tag[start...].firstIndex(of: "\"") else { return nil }
        return Double(tag[start..<end])
    }

    /// Poppler's XHTML text: the XML entities it writes (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#39;`).
    private static func decoded(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        let entities: [Substring: Character] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "#39": "'"]
        var out = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(5).firstIndex(of: ";"), let character = entities[after[..<semicolon]] {
                out.append(character)
                rest = after[after.index(after: semicolon)...]
            } else {
                out.append("&")
                rest = after
            }
        }
        return out + rest
    }
}
