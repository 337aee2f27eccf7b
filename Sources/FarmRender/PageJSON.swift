import FarmCore

/// The page JSON (`PageArtifacts.json(source:page:result:)`) written straight into bytes, as that tree renders:
/// render on demand writes it for every page at export, and a tree of every word's fields costs more than the
/// text it makes. `PageArtifactsTests` holds the two to the same bytes.
enum PageJSON {
    static func bytes(source: String, page: Int, result r: PageResult) -> [UInt8] {
        var out = ByteWriter(capacity: 1024 + r.text.utf8.count * 2 + 360 * r.blocks.reduce(0) { count, block in
            count + block.paragraphs.reduce(0) { $0 + $1.lines.reduce(0) { $0 + $1.words.count } }
        })
        out.add("{\"version\":")
        JSON.write(PageArtifacts.jsonVersion, into: &out)
        out.add(",\"source\":")
        JSON.write(source, into: &out)
        out.add(",\"page\":")
        JSON.write(page, into: &out)
        out.add(",\"width\":")
        JSON.write(r.width, into: &out)
        out.add(",\"height\":")
        JSON.write(r.height, into: &out)
        out.add(",\"resolution\":")
        JSON.write(r.resolution, into: &out)
        out.add(",\"text\":")
        JSON.write(r.text, into: &out)
        out.add(",\"mean_confidence\":")
        JSON.write(r.meanConfidence, places: 2, into: &out)
        if let engine = r.engine {
            out.add(",\"engine\":")
            JSON.write(engine, into: &out)
        }
        out.add(",\"language\":")
        if let language = r.language { JSON.write(language, into: &out) } else { out.add("null") }
        out.add(",\"keywords\":[")
        for (index, keyword) in r.keywords.enumerated() {
            if index > 0 { out.add(",") }
            JSON.write(keyword, into: &out)
        }
        out.add("],\"words\":[")
        let map = r.toOriginal.map(PointMap.init)
        var first = true
        for block in r.blocks {
            for paragraph in block.paragraphs {
                for line in paragraph.lines {
                    for word in line.words {
                        if !first { out.add(",") }
                        first = false
                        write(word, map: map, into: &out)
                    }
                }
            }
        }
        out.add("],\"lines\":[")
        first = true
        for block in r.blocks {
            for paragraph in block.paragraphs {
                for line in paragraph.lines {
                    if !first { out.add(",") }
                    first = false
                    out.add("{\"box\":")
                    write(line.box, into: &out)
                    out.add(",\"text\":")
                    write(text: line, into: &out)
                    out.add("}")
                }
            }
        }
        out.add("]")
        if let width = r.originalWidth, let height = r.originalHeight {
            out.add(",\"original_size\":[")
            JSON.write(width, into: &out)
            out.add(",")
            JSON.write(height, into: &out)
            out.add("]")
        }
        if let toOriginal = r.toOriginal {
            out.add(",\"to_original\":")
            out.append(toOriginal.json.bytes)
        }
        if r.findings != .null {
            out.add(",\"stages\":")
            out.append(r.findings.bytes)
        }
        if let quality = r.quality {
            out.add(",\"quality\":")
            out.append(quality.json.bytes)
        }
        out.add(",\"timings_ms\":{")
        for (index, timing) in r.timings.enumerated() {
            if index > 0 { out.add(",") }
            JSON.write(timing.stage, into: &out)
            out.add(":")
            JSON.write(timing.milliseconds, places: 1, into: &out)
        }
        out.add("}}")
        return out.bytes()
    }

    /// A word as `Word.json` has it, with its corners in the original image (`original`, through the page's `map`)
    /// when the page was corrected.
    private static func write(_ word: Word, map: PointMap?, into out: inout ByteWriter) {
        out.add("{\"text\":")
        JSON.write(word.text, into: &out)
        out.add(",\"box\":")
        write(word.box, into: &out)
        out.add(",\"confidence\":")
        JSON.write(word.confidence, places: 2, into: &out)
        if let language = word.language {
            out.add(",\"language\":")
            JSON.write(language, into: &out)
        }
        if word.fromDictionary { out.add(",\"dictionary\":true") }
        if !word.candidates.isEmpty {
            out.add(",\"candidates\":[")
            for (index, candidate) in word.candidates.enumerated() {
                out.add(index > 0 ? ",{\"text\":" : "{\"text\":")
                JSON.write(candidate.text, into: &out)
                out.add(",\"confidence\":")
                JSON.write(candidate.confidence, places: 2, into: &out)
                out.add("}")
            }
            out.add("]")
        }
        if let map {
            let (a, b, c, d) = map.corners(word.box)
            out.add(",\"original\":[")
            corner(a, into: &out)
            out.add(",")
            corner(b, into: &out)
            out.add(",")
            corner(c, into: &out)
            out.add(",")
            corner(d, into: &out)
            out.add("]")
        }
        out.add("}")
    }

    /// `line.text` as a JSON string. When every word has ASCII ends and nothing to trim (nearly every line), the
    /// text is the words a space apart (`Scripts.join`): written word by word, without making it.
    private static func write(text line: Line, into out: inout ByteWriter) {
        guard line.words.allSatisfy({ Scripts.hasTrimmedASCIIEnds($0.text) }) else { return JSON.write(line.text, into: &out) }
        out.add("\"")
        for (index, word) in line.words.enumerated() {
            if index > 0 { out.add(" ") }
            JSON.writeEscaped(word.text, into: &out)
        }
        out.add("\"")
    }

    /// [x, y] to a tenth.
    @inline(__always)
    private static func corner(_ point: Point, into out: inout ByteWriter) {
        out.add("[")
        JSON.write(point.x, places: 1, into: &out)
        out.add(",")
        JSON.write(point.y, places: 1, into: &out)
        out.add("]")
    }

    /// [x, y, width, height]
    private static func write(_ box: Rect, into out: inout ByteWriter) {
        out.add("[")
        JSON.write(box.x, into: &out)
        out.add(",")
        JSON.write(box.y, into: &out)
        out.add(",")
        JSON.write(box.width, into: &out)
        out.add(",")
        JSON.write(box.height, into: &out)
        out.add("]")
    }
}
