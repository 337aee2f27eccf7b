import FarmCore
#if canImport(Glibc)
import Glibc
#endif

/// An image as a PDF image XObject carries it (already compressed).
public struct PDFImage: Sendable {
    public enum Filter: String, Sendable {
        case dct = "DCTDecode"
        case ccittFax = "CCITTFaxDecode"
        case flate = "FlateDecode"
        /// JPEG 2000: the image carries its own color space and depth.
        case jpx = "JPXDecode"
    }

    public let data: [UInt8]
    public let filter: Filter
    public let width: Int
    public let height: Int
    public let bitsPerComponent: Int
    /// `/DeviceGray`, `/DeviceRGB`, or an indexed color space array.
    public let colorSpace: String
    /// Flate data with PNG predictors (one predictor byte per row).
    public let predictor: Bool
    public let components: Int

    /// An image whose color space follows from its samples: a palette (`<RRGGBB…>` hex and its size) is /Indexed
    /// over RGB, else 3 components are RGB and 1 gray.
    public init(data: [UInt8], filter: Filter, width: Int, height: Int, bitsPerComponent: Int, components: Int,
                palette: (hex: String, count: Int)?, predictor: Bool)
    {
        let colorSpace = palette.map { "[/Indexed /DeviceRGB \($0.count - 1) \($0.hex)]" }
            ?? (components == 3 ? "/DeviceRGB" : "/DeviceGray")
        self.init(data: data, filter: filter, width: width, height: height, bitsPerComponent: bitsPerComponent,
                  colorSpace: colorSpace, components: components, predictor: predictor)
    }

    public init(data: [UInt8], filter: Filter, width: Int, height: Int, bitsPerComponent: Int, colorSpace: String,
                components: Int = 1, predictor: Bool = false)
    {
        self.data = data
        self.filter = filter
        self.width = width
        self.height = height
        self.bitsPerComponent = bitsPerComponent
        self.colorSpace = colorSpace
        self.components = components
        self.predictor = predictor
    }
}

/// A searchable PDF page written from the result model: the page image, and over it invisible text (rendering
/// mode 3) lying on the words.
///
/// The text is laid out for text extraction as much as for selection: one run per line at the line's baseline,
/// in the page's reading order, each word stretched (Tz) to its box, with a real space character spanning the gap
/// to the next word (none between Chinese or Japanese words), and font sizes chosen per column so that poppler's
/// `pdftotext` keeps the columns apart and in order (see `textLayer`). The font is Tesseract's glyphless font
/// (every code maps to one empty glyph, 500 units wide), once per column with the ascent that makes a glyph's box
/// exactly a line tall, and a ToUnicode map that makes each 2-byte code its own UTF-16 unit: what a reader
/// extracts is the text we read.
public enum SearchablePDF {
    /// The first line of the content stream that holds a page's text layer: the same as `QPDF.textLayerMarker`, by
    /// which a later run finds the layers ocrfarm added.
    public static let textLayerMarker = "%ocrfarm-text-layer"

    /// One page as a complete PDF document.
    /// - Parameters:
    ///   - result: the page, with boxes in the recognized page's pixels.
    ///   - image: the page image, drawn where `placement` puts it.
    ///   - placement: the page's size, where the image goes and where the recognized page's words go on it.
    ///   - font: the glyphless TrueType font program (Tesseract's `pdf.ttf`).
    ///   - archive: for a PDF/A-2B file, its colour profile and date (nil: a plain PDF).
    ///   - compress: zlib compression for the content and map streams (nil leaves a stream uncompressed).
    public static func document(_ result: PageResult, image: PDFImage, placement: PDFPlacement, font: [UInt8], title: String,
                                archive: PDFAProfile? = nil, compress: ([UInt8]) -> [UInt8]?) -> [UInt8]
    {
        let (pageWidth, pageHeight) = (placement.width, placement.height)
        let layer = textLayer(result, placement: placement)
        // The text in a content stream of its own, marked as ocrfarm's, so that a later run finds and replaces it
        // (`--pdf-text redo`) as it does the layer it lays over a PDF page (`QPDF.addingText`).
        let content = ["q \(placement.image.pdfMatrix) cm /Im1 Do Q\n", textLayerMarker + "\nq\n" + layer.content + "Q\n"]

        var writer = PDFWriter()
        writer.packing = true
        let skeleton = writer.reserveOnePage()
        let imageObject = writer.reserve(), cidToGID = writer.reserve(), toUnicode = writer.reserve()
        let fontFile = writer.reserve()
        // One font per size factor (the same glyphless program, each with the ascent that fits its factor).
        let fonts = layer.ascents.map { _ in (type0: writer.reserve(), cidFont: writer.reserve(), descriptor: writer.reserve()) }

        writer.onePage(skeleton, width: pageWidth, height: pageHeight, resources: """
            /XObject << /Im1 \(imageObject) 0 R >> \
            /Font << \(fonts.indices.map { "/F\($0 + 1) \(fonts[$0].type0) 0 R" }.joined(separator: " ")) >> /ProcSet [/PDF /Text /ImageB /ImageC /ImageI]
            """, contents: content, title: title, archive: archive, compress: compress)
        writer.image(imageObject, image, compress: compress)
        for (index, object) in fonts.enumerated() {
            let ascent = number(layer.ascents[index])
            writer.object(object.type0, """
                << /Type /Font /Subtype /Type0 /BaseFont /GlyphLessFont /Encoding /Identity-H \
                /DescendantFonts [\(object.cidFont) 0 R] /ToUnicode \(toUnicode) 0 R >>
                """)
            writer.object(object.cidFont, """
                << /Type /Font /Subtype /CIDFontType2 /BaseFont /GlyphLessFont \
                /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> \
                /FontDescriptor \(object.descriptor) 0 R /CIDToGIDMap \(cidToGID) 0 R /DW \(glyphWidth) >>
                """)
            writer.object(object.descriptor, """
                << /Type /FontDescriptor /FontName /GlyphLessFont /Flags 5 /FontBBox [0 0 \(glyphWidth) \(ascent)] \
                /ItalicAngle 0 /Ascent \(ascent) /Descent -1 /CapHeight \(ascent) /StemV 80 /FontFile2 \(fontFile) 0 R >>
                """)
        }
        // Every 2-byte code shows glyph 1 (the font's one empty glyph).
        var map = [UInt8](repeating: 0, count: 2 << 16)
        for i in stride(from: 1, to: map.count, by: 2) { map[i] = 1 }
        writer.stream(cidToGID, map, compress: compress)
        writer.stream(toUnicode, Array(toUnicodeCMap.utf8), compress: compress)
        writer.stream(fontFile, font, dictionary: "/Length1 \(font.count)")
        return writer.finish(root: skeleton.catalog, compress: compress)
    }

    /// A page that could not be read, as its image alone: no text layer, the same page size a read page has.
    /// For a degraded page in an exported document (`ocrfarm export`), so the document keeps its page count.
    public static func imageOnly(_ image: PDFImage, resolution: Int, title: String, archive: PDFAProfile? = nil,
                                 compress: ([UInt8]) -> [UInt8]?) -> [UInt8]
    {
        let dpi = Double(resolution > 0 ? resolution : 300)
        let pageWidth = Double(image.width) * 72 / dpi
        let pageHeight = Double(image.height) * 72 / dpi
        var writer = PDFWriter()
        let skeleton = writer.reserveOnePage()
        let imageObject = writer.reserve()
        writer.onePage(skeleton, width: pageWidth, height: pageHeight,
                       resources: "/XObject << /Im1 \(imageObject) 0 R >> /ProcSet [/PDF /ImageB /ImageC /ImageI]",
                       content: "q \(number(pageWidth)) 0 0 \(number(pageHeight)) 0 0 cm /Im1 Do Q\n",
                       title: title, archive: archive, compress: compress)
        writer.image(imageObject, image)
        return writer.finish(root: skeleton.catalog)
    }

    /// A page standing in for one whose image cannot be shown either: an A4 page with `lines` drawn on it as real
    /// (visible, extractable) text, so both a reader and `pdftotext` find why the page is missing. Long lines are
    /// wrapped; characters outside Latin-1 (or missing from the font) are shown as `?`.
    ///
    /// The text is in `font`, embedded (FontFile2, only the glyphs shown) as a simple TrueType font in WinAnsi with the program's own
    /// widths, as PDF/A requires; without one, in the standard Helvetica, which is not embedded (not PDF/A).
    public static func placeholder(_ lines: [String], title: String, font: TrueTypeFont? = nil, archive: PDFAProfile? = nil,
                                   compress: ([UInt8]) -> [UInt8]?) -> [UInt8]
    {
        let width = 595.276, height = 841.89  // A4 in points
        var content = "q 0.6 G 1 w 36 36 \(number(width - 72)) \(number(height - 72)) re S Q\n"
        content += "BT /F1 12 Tf 15 TL 72 \(number(height - 96)) Td\n"
        // Lines fit between the margins: 80 characters of Helvetica, fewer of a wider font (a monospaced one's 'M').
        let limit = font.map { max(20, Int((width - 144) / (12 * Double(max($0.width(0x4D), 1)) / 1000))) } ?? 80
        for line in lines.flatMap({ wrapped($0, limit: limit) }) {
            content += "(\(latin1String(line, has: { font?.has($0) ?? true }))) Tj T*\n"
        }
        content += "ET\n"
        var writer = PDFWriter()
        let skeleton = writer.reserveOnePage()
        let fontObject = writer.reserve()
        writer.onePage(skeleton, width: width, height: height, resources: "/Font << /F1 \(fontObject) 0 R >> /ProcSet [/PDF /Text]",
                       content: content, title: title, archive: archive, compress: compress)
        if let font {
            let descriptor = writer.reserve(), program = writer.reserve()
            let widths = (32...255).map { String(font.width($0)) }.joined(separator: " ")
            writer.object(fontObject, """
                << /Type /Font /Subtype /TrueType /BaseFont /\(font.name) /FirstChar 32 /LastChar 255 \
                /Widths [\(widths)] /Encoding /WinAnsiEncoding /FontDescriptor \(descriptor) 0 R >>
                """)
            // Flags 32: nonsymbolic (Latin text in a standard encoding).
            writer.object(descriptor, """
                << /Type /FontDescriptor /FontName /\(font.name) /Flags 32 \
                /FontBBox [\(font.boundingBox.map { String(font.scaled($0)) }.joined(separator: " "))] /ItalicAngle 0 \
                /Ascent \(font.scaled(font.ascent)) /Descent \(font.scaled(font.descent)) /CapHeight \(font.scaled(font.ascent)) \
                /StemV 80 /FontFile2 \(program) 0 R >>
                """)
            // Only the glyphs the page shows (and '?', which stands for the others).
            let codes = Set(lines.flatMap { $0.unicodeScalars.map(\.value) } + [0x20, 0x3F])
            let embedded = font.subset(codes) ?? font.program
            writer.stream(program, embedded, dictionary: "/Length1 \(embedded.count)", compress: compress)
        } else {
            writer.object(fontObject, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        }
        return writer.finish(root: skeleton.catalog)
    }

    /// `text` cut at spaces into lines of at most `limit` characters (a longer word is cut where it must be).
    static func wrapped(_ text: String, limit: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
            var word = word
            while word.count > limit {
                if !line.isEmpty { lines.append(line); line = "" }
                lines.append(String(word.prefix(limit)))
                word = String(word.dropFirst(limit))
            }
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= limit {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// A PDF literal string of `text` in WinAnsi (Latin-1 here): the delimiters and backslash escaped, controls and
    /// characters the encoding lacks as `?`, everything else as octal escapes above ASCII, so the content stream is
    /// plain ASCII.
    static func latin1String(_ text: String, has: (UInt32) -> Bool = { _ in true }) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x28, 0x29, 0x5C: out += "\\" + String(scalar)
            case 0x20..<0x7F where has(scalar.value): out += String(scalar)
            case 0xA0...0xFF where has(scalar.value): out += "\\" + String(scalar.value, radix: 8)
            default: out += "?"
            }
        }
        return out
    }

    /// Width of the glyphless font's glyph, in 1/1000 of the font size.
    static let glyphWidth = 500

    /// The invisible text of a page, in the model's (reading) order, and the ascent of each font it uses (font
    /// `/F1` has the first), in 1/1000 of the font size.
    ///
    /// Text extractors rebuild reading order from geometry alone. Poppler's (`pdftotext`) keeps lines in one
    /// block when their font sizes agree within 5% and their baselines are at most 1.5 font sizes apart, takes
    /// two baselines closer than half a font size for one line, joins text beside a block into it when the sizes
    /// differ by less than 20%, reads blocks that line up across columns as a table, row by row, and where its
    /// rules for columns do not decide, reads the block whose top is higher first. So the text is written in
    /// flows (a run of lines in reading order, each below the last and overlapping it: a column), each with one
    /// font size `k` × its median line height, where `k` keeps every gap between its paragraphs bridged and its
    /// lines apart, and differs from the size of the column beside it by as much as it can; each flow has its own
    /// font, whose ascent makes every glyph box exactly a line height tall, except that a column whose top is
    /// level with (or above) the top of a column before it in reading order has its glyph tops lowered by a
    /// fraction of a point, so it does not come first.
    ///
    /// The layer is laid out on the recognized page scaled to points (`scale` points a pixel, y up), and each word's
    /// text matrix takes its box from there to where `placement` puts it on the PDF page: exact at the word's
    /// baseline and left edge, and along its baseline and left side (turned, skewed, or in perspective).
    static func textLayer(_ result: PageResult, placement: PDFPlacement) -> (content: String, ascents: [Double]) {
        let s = placement.scale(recognizedWidth: result.width, recognizedHeight: result.height)
        let scale = (x: s, y: s)
        let pageHeight = Double(result.height) * s
        let map = LayerMap(scale: s, height: Double(result.height), words: placement.words)
        let lines = result.lines.filter { $0.box.height > 0 && $0.words.contains { !$0.text.isEmpty } }
        let flows = flows(lines)
        var sizes: [Double] = []
        var ascents: [Double] = []
        var tops: [Double] = []  // top of each flow's first glyph box, points from the top of the page
        for flow in flows {
            let heights = flow.map(\.box.height).sorted()
            let height = Double(heights[heights.count / 2]) * scale.y
            let baselines = flow.map { Double($0.box.maxY) * scale.y }
            let spacings = zip(baselines, baselines.dropFirst()).map { $1 - $0 }.filter { $0 > 0 }
            // Lines kept apart: half a size below the tightest spacing, with a margin.
            let most = max(minimumFactor, min(maximumFactor, (spacings.min() ?? .infinity) / height * 1.7))
            // Every gap bridged: the widest spacing within 1.5 sizes, with a margin.
            let least = min(most, max(minimumFactor, (spacings.max() ?? 0) / height / 1.5 * 1.04))
            // The columns beside this one that come before it in reading order (a line of each level with the
            // other and clear of it), with the narrowest gap between them.
            var gaps: [Int: Int] = [:]
            for (other, theirs) in flows[..<sizes.count].enumerated() {
                for a in flow.lazy.map(\.box) {
                    for b in theirs.lazy.map(\.box) where min(a.maxY, b.maxY) > max(a.y, b.y) && (b.maxX <= a.x || a.maxX <= b.x) {
                        let gap = max(b.x - a.maxX, a.x - b.maxX)
                        gaps[other] = min(gaps[other] ?? gap, gap)
                    }
                }
            }
            let beside = Array(gaps.keys)
            let nearest = gaps.min { $0.value < $1.value }?.key
            let candidates = [least, (least * most).squareRoot(), most]
            var factor = nearest.map { other in
                candidates.max { abs(log($0 * height / sizes[other])) < abs(log($1 * height / sizes[other])) }!
            } ?? candidates[1]
            // Keeping the columns apart matters more than bridging every gap: below 25% apart, a smaller size.
            if let other = nearest, abs(log(factor * height / sizes[other])) < log(columnSizeRatio) {
                let up = sizes[other] * columnSizeRatio / height, down = sizes[other] / columnSizeRatio / height
                if up <= most { factor = up } else if down >= minimumFactor { factor = down }
            }
            // Below the top of every column before it.
            var top = (baselines.min() ?? 0) - height
            let lowered = (beside.map { tops[$0] }.max() ?? -.infinity) + topMargin
            if lowered > top && lowered - top <= height * 0.3 { top = lowered }
            let glyphHeight = (baselines.min() ?? 0) - top
            sizes.append(factor * height)
            ascents.append(1000 * glyphHeight / (factor * height))
            tops.append(top)
        }
        var out = "BT\n3 Tr\n"
        for (index, flow) in flows.enumerated() {
            out += "/F\(index + 1) \(number(sizes[index])) Tf\n"
            for line in flow {
                out += textLine(line, size: sizes[index], pageHeight: pageHeight, scale: scale, map: map)
            }
        }
        return (out + "ET\n", ascents)
    }

    static let minimumFactor = 1.1
    /// Sizes of neighbouring columns differ at least this much (poppler merges text within 20%).
    static let columnSizeRatio = 1.25
    static let maximumFactor = 2.6
    /// How much higher a column's top must be than the next column's, in points.
    static let topMargin = 0.25

    /// Lines in reading order cut into runs that read down one column.
    static func flows(_ lines: [Line]) -> [[Line]] {
        var flows: [[Line]] = []
        for line in lines {
            if let previous = flows.last?.last {
                let overlap = min(previous.box.maxX, line.box.maxX) - max(previous.box.x, line.box.x)
                let below = line.box.y >= previous.box.y + previous.box.height / 2
                if below && overlap * 2 >= min(previous.box.width, line.box.width) {
                    flows[flows.count - 1].append(line)
                    continue
                }
            }
            flows.append([line])
        }
        return flows
    }

    /// One line's words on the line's baseline, each stretched (Tz) over exactly its box, and between two words a
    /// space character stretched over the gap (none between two words of unspaced script).
    static func textLine(_ line: Line, size: Double, pageHeight: Double, scale: (x: Double, y: Double), map: LayerMap) -> String {
        var out = ""
        let words = line.words.filter { !$0.text.isEmpty && $0.box.width > 0 }
        let baseline = pageHeight - Double(line.box.maxY) * scale.y
        let advance = Double(glyphWidth) / 1000 * size  // one glyph at 100% horizontal scaling
        let top = pageHeight - Double(line.box.y) * scale.y
        var previous: LayerMap.WordMatrix?
        for (index, word) in words.enumerated() {
            let units = Array(word.text.utf16)
            let width = Double(word.box.width) * scale.x
            let left = Double(word.box.x) * scale.x
            let matrix = map.matrix(left: left, right: left + width, baseline: baseline, top: top)
            // After a word of the same upright matrix, a move to this word's start says the same in fewer bytes.
            if let last = previous, let scale = matrix.uprightScale, last.linear == matrix.linear {
                let dx = number((matrix.origin.x - last.origin.x) / scale.x, places: 2)
                let dy = number((matrix.origin.y - last.origin.y) / scale.y, places: 2)
                out += "\(dx) \(dy) Td "
                // The start as the reader has it (rounded), for the next move.
                previous = LayerMap.WordMatrix(linear: matrix.linear, origin: Point(
                    last.origin.x + (Double(dx) ?? 0) * scale.x, last.origin.y + (Double(dy) ?? 0) * scale.y),
                    uprightScale: scale)
            } else {
                out += "\(matrix.linear) \(number(matrix.origin.x, places: 2)) \(number(matrix.origin.y, places: 2)) Tm "
                previous = LayerMap.WordMatrix(linear: matrix.linear, origin: Point(
                    Double(number(matrix.origin.x, places: 2)) ?? matrix.origin.x,
                    Double(number(matrix.origin.y, places: 2)) ?? matrix.origin.y), uprightScale: matrix.uprightScale)
            }
            out += "\(number(100 * width / (Double(units.count) * advance), places: 2)) Tz <\(units.map(hex).joined())> Tj"
            if index + 1 < words.count, let last = word.text.last, let first = words[index + 1].text.first,
               !(Scripts.isUnspaced(last) && Scripts.isUnspaced(first))
            {
                let gap = max(0.01, Double(words[index + 1].box.x - word.box.maxX) * scale.x)
                out += " \(number(max(0.01, 100 * gap / advance), places: 2)) Tz <0020> Tj"
            }
            out += "\n"
        }
        return out
    }

    /// A number as PDF wants it: plain decimal, at most `places` places (three unless told), never an exponent.
    static func number(_ value: Double, places: Int = 3) -> String {
        guard value.isFinite else { return "0" }
        var unit = 1
        for _ in 0..<places { unit *= 10 }
        let parts = Int((value * Double(unit)).rounded())
        let sign = parts < 0 ? "-" : ""
        let magnitude = abs(parts)
        var fraction = String(magnitude % unit)
        if magnitude % unit == 0 { return sign + String(magnitude / unit) }
        while fraction.count < places { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return sign + String(magnitude / unit) + "." + fraction
    }

    /// The text layer's space (the recognized page at `scale` points a pixel, y up, `height` pixels tall) mapped
    /// onto the PDF page (`words`: recognized pixels → page points).
    struct LayerMap {
        let scale: Double
        let height: Double
        let words: Homography

        func page(_ u: Double, _ v: Double) -> Point { words.apply(Point(u / scale, height - v / scale)) }

        /// A word's text matrix: its linear part (`a b c d`, in PDF syntax), where the word starts on the page, and for
        /// an upright one its scales.
        struct WordMatrix {
            let linear: String
            let origin: Point
            let uprightScale: (x: Double, y: Double)?
        }

        /// Text set at less than this angle to the page's axes (degrees) is set upright.
        static let uprightAngle = 12.0

        /// The text matrix for a word from `left` to `right` on `baseline`, its line's top at `top` (layer space): the
        /// affine map that takes the word's baseline and left side where the page has them. A word set at a small
        /// angle (a skewed scan, a photo's page in perspective) is set upright, its baseline through the middle of
        /// the slanted one: text extractors read a line of upright words as one line (poppler takes a slanted word's
        /// letters for several lines), and the upright box still covers the word.
        func matrix(left: Double, right: Double, baseline: Double, top: Double) -> WordMatrix {
            var origin = page(left, baseline)
            let end = page(right, baseline), up = page(left, top)
            let (width, rise) = (max(right - left, 1e-6), max(top - baseline, 1e-6))
            var values = [(end.x - origin.x) / width, (end.y - origin.y) / width, (up.x - origin.x) / rise,
                          (up.y - origin.y) / rise]
            let angle = atan2(values[1], values[0]) * 180 / .pi
            var upright: (x: Double, y: Double)?
            if abs(angle) < Self.uprightAngle, values[3] > 0 {
                let along = (values[0] * values[0] + values[1] * values[1]).squareRoot()
                let across = abs(values[0] * values[3] - values[1] * values[2]) / along
                origin = Point(min(origin.x, up.x), (origin.y + end.y) / 2)
                values = [along, 0, 0, across]
                upright = (along, across)
            }
            return WordMatrix(linear: values.map { SearchablePDF.number($0, places: 4) }.joined(separator: " "), origin: origin,
                              uprightScale: upright)
        }
    }

    static func hex(_ unit: UInt16) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(unit >> 12)], digits[Int(unit >> 8 & 15)], digits[Int(unit >> 4 & 15)], digits[Int(unit & 15)]])
    }

    /// A PDF text string in UTF-16BE hex, with the byte order mark readers expect for Unicode strings.
    static func unicodeString(_ text: String) -> String {
        "<FEFF" + text.utf16.map(hex).joined() + ">"
    }

    static let toUnicodeCMap = """
        /CIDInit /ProcSet findresource begin
        12 dict begin
        begincmap
        /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
        /CMapName /Adobe-Identity-UCS def
        /CMapType 2 def
        1 begincodespacerange
        <0000> <FFFF>
        endcodespacerange
        1 beginbfrange
        <0000> <FFFF> <0000>
        endbfrange
        endcmap
        CMapName currentdict /CMap defineresource pop
        end
        end

        """
}

/// Writes numbered PDF objects and the cross-reference table that finds them.
struct PDFWriter {
    /// The header, and a comment of four bytes above 127 so that transfer programs take the file for binary
    /// (PDF/A-2 §6.1.2).
    private(set) var bytes: [UInt8] = Array("%PDF-1.5\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A]
    private var info = 0
    private var offsets: [Int: Int] = [:]
    private var count = 0

    /// The next object number (objects may be written in any order once reserved).
    mutating func reserve() -> Int {
        count += 1
        return count
    }

    /// Whether objects other than streams go into one compressed object stream, found through a cross-reference
    /// stream (PDF 1.5; PDF/A-2 allows both): a page's dozen font dictionaries take a tenth of the bytes so.
    var packing = false
    /// Objects waiting for the object stream, in the order written.
    private var packed: [(number: Int, body: String)] = []

    mutating func object(_ number: Int, _ body: String) {
        if packing {
            packed.append((number, body))
            return
        }
        offsets[number] = bytes.count
        bytes += Array("\(number) 0 obj\n\(body)\nendobj\n".utf8)
    }

    /// A stream object; `dictionary` holds entries besides /Length (and /Filter when compressed here).
    mutating func stream(_ number: Int, _ data: [UInt8], dictionary: String = "", compress: ([UInt8]) -> [UInt8]? = { _ in nil }) {
        var payload = data
        var entries = dictionary
        if let packed = compress(data) {
            payload = packed
            entries += (entries.isEmpty ? "" : " ") + "/Filter /FlateDecode"
        }
        offsets[number] = bytes.count
        bytes += Array("\(number) 0 obj\n<< /Length \(payload.count)\(entries.isEmpty ? "" : " " + entries) >>\nstream\n".utf8)
        bytes += payload
        bytes += Array("\nendstream\nendobj\n".utf8)
    }

    /// An image XObject, its data as given (already compressed). JPEG and JPEG 2000 data is deflated on top when
    /// `compress` makes it smaller by a percent or more (entropy-coded data still has some slack; OCRmyPDF does the
    /// same): the image's bytes come back as they were (`pdfimages -all`).
    mutating func image(_ number: Int, _ image: PDFImage, compress: ([UInt8]) -> [UInt8]? = { _ in nil }) {
        var decode = ""
        switch image.filter {
        case .ccittFax: decode = " /DecodeParms << /K -1 /Columns \(image.width) /Rows \(image.height) >>"
        case .flate where image.predictor:
            decode = " /DecodeParms << /Predictor 15 /Colors \(image.components) /Columns \(image.width) "
                + "/BitsPerComponent \(image.bitsPerComponent) >>"
        default: break
        }
        var data = image.data
        var filter = "/" + image.filter.rawValue
        if image.filter == .dct || image.filter == .jpx, let packed = compress(image.data), packed.count < image.data.count / 100 * 99 {
            data = packed
            filter = "[/FlateDecode /\(image.filter.rawValue)]"
        }
        // A JPEG 2000 image's color space and depth are its own (PDF 32000-1 §8.9.5; PDF/A-2 §6.2.8.3).
        let color = image.filter == .jpx ? "" : "/ColorSpace \(image.colorSpace) /BitsPerComponent \(image.bitsPerComponent) "
        stream(number, data, dictionary: """
            /Type /XObject /Subtype /Image /Width \(image.width) /Height \(image.height) \
            \(color)/Filter \(filter)\(decode)
            """)
    }

    /// The object numbers of a one-page document's catalog, page tree, page and content stream.
    struct OnePage {
        let catalog: Int, pages: Int, page: Int, contents: Int
    }

    /// Reserves a one-page document's skeleton (first, so its objects lead the file).
    mutating func reserveOnePage() -> OnePage {
        OnePage(catalog: reserve(), pages: reserve(), page: reserve(), contents: reserve())
    }

    /// Writes the catalog (`catalog(_:pages:title:archive:compress:)`), the page tree, the page of `width` × `height`
    /// points with `resources` (the entries inside its /Resources dictionary) and its content stream.
    mutating func onePage(_ skeleton: OnePage, width: Double, height: Double, resources: String, content: String, title: String,
                          archive: PDFAProfile?, compress: ([UInt8]) -> [UInt8]?) {
        onePage(skeleton, width: width, height: height, resources: resources, contents: [content], title: title, archive: archive,
                compress: compress)
    }

    /// `onePage` with the page's content in several streams, drawn in order.
    mutating func onePage(_ skeleton: OnePage, width: Double, height: Double, resources: String, contents: [String], title: String,
                          archive: PDFAProfile?, compress: ([UInt8]) -> [UInt8]?) {
        catalog(skeleton.catalog, pages: skeleton.pages, title: title, archive: archive, compress: compress)
        object(skeleton.pages, "<< /Type /Pages /Kids [\(skeleton.page) 0 R] /Count 1 >>")
        let numbers = [skeleton.contents] + contents.dropFirst().map { _ in reserve() }
        let named = numbers.count == 1 ? "\(numbers[0]) 0 R" : "[" + numbers.map { "\($0) 0 R" }.joined(separator: " ") + "]"
        object(skeleton.page, """
            << /Type /Page /Parent \(skeleton.pages) 0 R /MediaBox [0 0 \(SearchablePDF.number(width)) \(SearchablePDF.number(height))] \
            /Contents \(named) /Resources << \(resources) >> >>
            """)
        for (number, content) in zip(numbers, contents) { stream(number, Array(content.utf8), compress: compress) }
    }

    /// The catalog, and the `/Info` dictionary; for PDF/A, the XMP metadata stream (never compressed: PDF/A
    /// wants it readable by tools that know no PDF filters) and the sRGB output intent.
    mutating func catalog(_ number: Int, pages: Int, title: String, archive: PDFAProfile?, compress: ([UInt8]) -> [UInt8]?) {
        info = reserve()
        object(info, PDFMetadata.info(title: title, date: archive?.date))
        guard let archive else {
            object(number, "<< /Type /Catalog /Pages \(pages) 0 R >>")
            return
        }
        let metadata = reserve(), profile = reserve()
        stream(metadata, PDFMetadata.xmp(title: title, date: archive.date), dictionary: "/Type /Metadata /Subtype /XML")
        stream(profile, archive.iccProfile, dictionary: "/N 3", compress: compress)
        object(number, """
            << /Type /Catalog /Pages \(pages) 0 R /Metadata \(metadata) 0 R /OutputIntents [<< /Type /OutputIntent \
            /S /GTS_PDFA1 /OutputConditionIdentifier (sRGB) /Info (sRGB IEC61966-2.1) /DestOutputProfile \(profile) 0 R >>] >>
            """)
    }

    /// The cross-reference table and trailer (with a file /ID, from the content: PDF/A wants one); the finished
    /// document. `catalog` must have been written.
    mutating func finish(root: Int, compress: ([UInt8]) -> [UInt8]? = { _ in nil }) -> [UInt8] {
        if !packed.isEmpty { return finishPacked(root: root, compress: compress) }
        let start = bytes.count
        var table = "xref\n0 \(count + 1)\n0000000000 65535 f \n"
        for number in 1...max(count, 1) {
            let offset = String(offsets[number] ?? 0)
            table += String(repeating: "0", count: max(0, 10 - offset.count)) + offset + " 00000 n \n"
        }
        let id = Self.identifier(bytes)
        table += "trailer\n<< /Size \(count + 1) /Root \(root) 0 R /Info \(info) 0 R /ID [<\(id)> <\(id)>] >>\n"
            + "startxref\n\(start)\n%%EOF\n"
        bytes += Array(table.utf8)
        return bytes
    }
}

extension PDFWriter {
    /// The object stream of the packed objects, and a cross-reference stream (`/W [1 4 2]`: type, offset or object
    /// stream, generation or index) with the trailer's entries, in place of the table and trailer.
    private mutating func finishPacked(root: Int, compress: ([UInt8]) -> [UInt8]?) -> [UInt8] {
        let objectStream = reserve(), xref = reserve()
        var header = "", body = ""
        for (number, text) in packed {
            header += "\(number) \(body.utf8.count) "
            body += text + "\n"
        }
        let index = Dictionary(uniqueKeysWithValues: packed.enumerated().map { ($0.element.number, $0.offset) })
        stream(objectStream, Array((header + body).utf8), dictionary: "/Type /ObjStm /N \(packed.count) /First \(header.utf8.count)",
               compress: compress)
        offsets[xref] = bytes.count
        var entries: [UInt8] = [0, 0, 0, 0, 0, 0xFF, 0xFF]
        for number in 1...count {
            let (kind, field, last): (UInt8, Int, Int) = if let slot = index[number] { (2, objectStream, slot) }
                else { (1, offsets[number] ?? 0, 0) }
            entries += [kind, UInt8(field >> 24 & 0xFF), UInt8(field >> 16 & 0xFF), UInt8(field >> 8 & 0xFF), UInt8(field & 0xFF),
                        UInt8(last >> 8 & 0xFF), UInt8(last & 0xFF)]
        }
        let start = bytes.count
        let id = Self.identifier(bytes)
        stream(xref, entries, dictionary: "/Type /XRef /Size \(count + 1) /W [1 4 2] /Root \(root) 0 R /Info \(info) 0 R "
               + "/ID [<\(id)> <\(id)>]", compress: compress)
        bytes += Array("startxref\n\(start)\n%%EOF\n".utf8)
        return bytes
    }

    /// 16 bytes in hex that differ for different files: two FNV-1a hashes of the content (no cryptographic
    /// strength needed; the date in a PDF/A file's metadata sets two runs of one page apart).
    static func identifier(_ bytes: [UInt8]) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in bytes {
            a = (a ^ UInt64(byte)) &* 0x100_0000_01b3
            b = (b ^ UInt64(byte ^ 0x5A)) &* 0x100_0000_01b3
        }
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return hex(a) + hex(b)
    }
}
