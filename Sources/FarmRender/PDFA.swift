import FarmCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// What a PDF/A-2B file carries besides what every PDF of ours has: the colour profile of its output intent and
/// the time stamped, in both syntaxes, into `/Info` and the XMP metadata.
///
/// The output intent is always sRGB, also for gray pages: PDF/A lets DeviceGray be used under any output intent but
/// DeviceRGB (and an indexed DeviceRGB palette) only under an RGB one, and a merged document keeps one output
/// intent (its first page's) for pages of both kinds. OCRmyPDF does the same.
public struct PDFAProfile: Sendable {
    /// An ICC profile with 3 components (RGB) of class monitor or output.
    public let iccProfile: [UInt8]
    /// Unix seconds: the creation, modification and metadata date.
    public let date: Double

    public init(iccProfile: [UInt8], date: Double) {
        self.iccProfile = iccProfile
        self.date = date
    }

    /// The system's sRGB profile (read once), dated now; nil with the reason when none is installed.
    public static func current() -> Result<PDFAProfile, PDFAError> {
        PDFMetadata.sRGBProfile().map { PDFAProfile(iccProfile: $0, date: Clock.now) }
    }
}

public struct PDFAError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

/// `/Info` and XMP metadata that agree (PDF/A-2 §6.6.3: title, producer, creator tool and dates).
public enum PDFMetadata {
    public static let producer = "ocrfarm"

    /// Where Debian keeps free sRGB profiles: icc-profiles-free, colord, Ghostscript's.
    static let sRGBPaths = [
        "/usr/share/color/icc/sRGB.icc", "/usr/share/color/icc/sRGB.icm",
        "/usr/share/color/icc/colord/sRGB.icc", "/usr/share/color/icc/ghostscript/srgb.icc",
    ]

    private static let cachedProfile = Mutex<[UInt8]?>(nil)

    /// The first installed sRGB profile that is an RGB display or output profile (what an output intent may hold).
    static func sRGBProfile() -> Result<[UInt8], PDFAError> {
        if let profile = cachedProfile.withLock({ $0 }) { return .success(profile) }
        for path in sRGBPaths {
            guard let bytes = try? FileSystem.read(path), bytes.count > 128 else { continue }
            let colorSpace = String(decoding: bytes[16..<20], as: UTF8.self)
            let profileClass = String(decoding: bytes[12..<16], as: UTF8.self)
            guard colorSpace == "RGB ", profileClass == "mntr" || profileClass == "prtr" else { continue }
            cachedProfile.withLock { $0 = bytes }
            return .success(bytes)
        }
        return .failure(PDFAError(message: "no sRGB ICC profile for PDF/A (looked in \(sRGBPaths.joined(separator: ", "));"
            + " Debian: icc-profiles-free or libgs-common), or use --pdf-type pdf"))
    }

    /// The `/Info` dictionary; with `date`, its creation and modification dates.
    public static func info(title: String, date: Double?) -> String {
        var out = "<< /Producer (\(producer)) /Creator (\(producer)) /Title \(SearchablePDF.unicodeString(title))"
        if let date { out += " /CreationDate (\(pdfDate(date))) /ModDate (\(pdfDate(date)))" }
        return out + " >>"
    }

    /// The XMP packet: PDF/A-2B identification, and the `/Info` entries again (`author`, `subject` and `keywords`
    /// when the document's `/Info` has them: dc:creator, dc:description, pdf:Keywords).
    /// With `document`, its catalogue date, identifier and shelfmark too (dc:date, dc:identifier, dc:source; its
    /// title and creator are the caller's `title` and `author`).
    public static func xmp(title: String, date: Double, author: String? = nil, subject: String? = nil,
                           keywords: String? = nil, document: DocumentMetadata = DocumentMetadata()) -> [UInt8] {
        let when = xmpDate(date)
        var dublinCore = ""
        if !document.date.isEmpty {
            dublinCore += "\n   <dc:date><rdf:Seq><rdf:li>\(XML.escaped(document.date))</rdf:li></rdf:Seq></dc:date>"
        }
        if !document.identifier.isEmpty { dublinCore += "\n   <dc:identifier>\(XML.escaped(document.identifier))</dc:identifier>" }
        if !document.shelfmark.isEmpty { dublinCore += "\n   <dc:source>\(XML.escaped(document.shelfmark))</dc:source>" }
        if let author {
            dublinCore += "\n   <dc:creator><rdf:Seq><rdf:li>\(XML.escaped(author))</rdf:li></rdf:Seq></dc:creator>"
        }
        if let subject {
            dublinCore += "\n   <dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">\(XML.escaped(subject))</rdf:li></rdf:Alt></dc:description>"
        }
        let pdfKeywords = keywords.map { "\n   <pdf:Keywords>\(XML.escaped($0))</pdf:Keywords>" } ?? ""
        let text = """
            <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
            <x:xmpmeta xmlns:x="adobe:ns:meta/">
             <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
              <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
               <pdfaid:part>2</pdfaid:part>
               <pdfaid:conformance>B</pdfaid:conformance>
              </rdf:Description>
              <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
               <dc:format>application/pdf</dc:format>
               <dc:title><rdf:Alt><rdf:li xml:lang="x-default">\(XML.escaped(title))</rdf:li></rdf:Alt></dc:title>\(dublinCore)
              </rdf:Description>
              <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
               <xmp:CreateDate>\(when)</xmp:CreateDate>
               <xmp:ModifyDate>\(when)</xmp:ModifyDate>
               <xmp:MetadataDate>\(when)</xmp:MetadataDate>
               <xmp:CreatorTool>\(producer)</xmp:CreatorTool>
              </rdf:Description>
              <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
               <pdf:Producer>\(producer)</pdf:Producer>\(pdfKeywords)
              </rdf:Description>
             </rdf:RDF>
            </x:xmpmeta>
            <?xpacket end="w"?>
            """
        return Array(text.utf8)
    }

    /// The `/Info` entries for a document's catalogue fields beyond its title: `Author` (the creator), and `Date`,
    /// `Identifier` and `Shelfmark` (custom keys, as PDF allows); unset fields are left out.
    public static func infoEntries(_ document: DocumentMetadata) -> [(key: String, value: String)] {
        [("Author", document.creator), ("Date", document.date), ("Identifier", document.identifier),
         ("Shelfmark", document.shelfmark)].filter { !$0.1.isEmpty }
    }

    /// `D:20261201151500+00'00'`: PDF's date syntax, in UTC.
    public static func pdfDate(_ seconds: Double) -> String {
        let p = parts(seconds)
        return "D:\(p.year)\(p.month)\(p.day)\(p.hour)\(p.minute)\(p.second)+00'00'"
    }

    /// `2026-12-01T15:15:00+00:00`: the same instant in XMP's syntax.
    public static func xmpDate(_ seconds: Double) -> String {
        let p = parts(seconds)
        return "\(p.year)-\(p.month)-\(p.day)T\(p.hour):\(p.minute):\(p.second)+00:00"
    }

    private static func parts(_ seconds: Double) -> (year: String, month: String, day: String, hour: String, minute: String, second: String) {
        var time = time_t(seconds.rounded(.down))
        var t = tm()
        gmtime_r(&time, &t)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return (pad(t.tm_year + 1900, 4), pad(t.tm_mon + 1), pad(t.tm_mday), pad(t.tm_hour), pad(t.tm_min), pad(t.tm_sec))
    }
}

/// The few facts of a TrueType font a simple PDF font dictionary needs (PDF/A wants the widths there to be the
/// font program's own): units per em, bounding box, ascent and descent, and the advance width of each Latin-1
/// character, read from `head`, `hhea`, `hmtx` and the Windows Unicode `cmap` (format 4).
public struct TrueTypeFont: Sendable {
    public let program: [UInt8]
    public let unitsPerEm: Int
    public let boundingBox: [Int]
    public let ascent: Int
    public let descent: Int
    /// The PostScript-safe name to give it (`/BaseFont`).
    public let name: String
    private let advances: [UInt16: Int]
    /// Glyph number of each Latin-1 character the font has.
    private let glyphs: [UInt16: Int]

    /// Nil when `program` is not a TrueType font with the tables named above.
    public init?(_ program: [UInt8], name: String) {
        self.program = program
        self.name = name
        func u16(_ at: Int) -> Int? { at + 2 <= program.count ? Int(program[at]) << 8 | Int(program[at + 1]) : nil }
        func s16(_ at: Int) -> Int? { u16(at).map { $0 >= 0x8000 ? $0 - 0x10000 : $0 } }
        func u32(_ at: Int) -> Int? { guard let hi = u16(at), let lo = u16(at + 2) else { return nil }; return hi << 16 | lo }
        guard let tableCount = u16(4) else { return nil }
        var tables: [String: Int] = [:]
        for index in 0..<tableCount {
            let record = 12 + 16 * index
            guard record + 16 <= program.count, let offset = u32(record + 8) else { return nil }
            tables[String(decoding: program[record..<record + 4], as: UTF8.self)] = offset
        }
        guard let head = tables["head"], let hhea = tables["hhea"], let hmtx = tables["hmtx"], let cmap = tables["cmap"],
              let unitsPerEm = u16(head + 18), unitsPerEm > 0,
              let xMin = s16(head + 36), let yMin = s16(head + 38), let xMax = s16(head + 40), let yMax = s16(head + 42),
              let ascent = s16(hhea + 4), let descent = s16(hhea + 6), let metricCount = u16(hhea + 34), metricCount > 0,
              let subtableCount = u16(cmap + 2)
        else { return nil }
        self.unitsPerEm = unitsPerEm
        boundingBox = [xMin, yMin, xMax, yMax]
        self.ascent = ascent
        self.descent = descent
        // The Windows Unicode BMP subtable (platform 3, encoding 1), format 4: segments of character codes.
        var format4: Int?
        for index in 0..<subtableCount {
            let record = cmap + 4 + 8 * index
            if u16(record) == 3, u16(record + 2) == 1, let offset = u32(record + 4), u16(cmap + offset) == 4 { format4 = cmap + offset }
        }
        guard let table = format4, let doubledSegments = u16(table + 6) else { return nil }
        let segments = doubledSegments / 2
        let ends = table + 14, starts = ends + doubledSegments + 2, deltas = starts + doubledSegments, ranges = deltas + doubledSegments
        func glyph(_ code: Int) -> Int? {
            for segment in 0..<segments {
                guard let end = u16(ends + 2 * segment), code <= end else { continue }
                guard let start = u16(starts + 2 * segment), code >= start, let delta = u16(deltas + 2 * segment),
                      let rangeOffset = u16(ranges + 2 * segment)
                else { return nil }
                if rangeOffset == 0 { return (code + delta) & 0xFFFF }
                guard let id = u16(ranges + 2 * segment + rangeOffset + 2 * (code - start)), id != 0 else { return nil }
                return (id + delta) & 0xFFFF
            }
            return nil
        }
        var advances: [UInt16: Int] = [:], glyphs: [UInt16: Int] = [:]
        for code in Array(0x20...0x7E) + Array(0xA0...0xFF) {
            guard let id = glyph(code), let advance = u16(hmtx + 4 * min(id, metricCount - 1)) else { continue }
            advances[UInt16(code)] = advance
            glyphs[UInt16(code)] = id
        }
        guard advances[0x20] != nil else { return nil }
        self.advances = advances
        self.glyphs = glyphs
    }

    /// The font program with the outlines of only the glyphs `codes` (Latin-1 characters) show, and the glyphs those
    /// are built from: every other glyph is left empty, glyph numbers, metrics and the character map unchanged, and
    /// the tables a PDF reader does not use (layout, kerning, device metrics) left out. A whole DejaVu Sans Mono is
    /// 200 KB compressed on every placeholder page; this keeps a few KB. Nil when the outlines cannot be read.
    public func subset(_ codes: Set<UInt32>) -> [UInt8]? {
        let font = FontProgram(bytes: program)
        guard let tables = font.tables() else { return nil }
        func table(_ tag: String) -> (offset: Int, length: Int)? { tables.first { $0.tag == tag }.map { ($0.offset, $0.length) } }
        guard let head = table("head"), let maxp = table("maxp"), let loca = table("loca"), let glyf = table("glyf"),
              let glyphCount = font.u16(maxp.offset + 4), let longOffsets = font.u16(head.offset + 50)
        else { return nil }
        let outlines = FontProgram.Outlines(glyf: glyf.offset, glyphCount: glyphCount) { glyph in
            longOffsets == 1 ? font.u32(loca.offset + 4 * glyph) : font.u16(loca.offset + 2 * glyph).map { $0 * 2 }
        }
        let shown = [0] + codes.compactMap { $0 <= 0xFFFF ? glyphs[UInt16($0)] : nil }
        let keep = font.glyphs(shown, withComponentsIn: outlines)
        guard let rebuilt = font.outlines(keeping: keep, of: outlines) else { return nil }
        let kept = ["cmap", "cvt ", "fpgm", "glyf", "head", "hhea", "hmtx", "loca", "maxp", "name", "OS/2", "post", "prep"]
        var parts: [(tag: String, data: [UInt8])] = []
        for entry in tables where kept.contains(entry.tag) {
            var data = Array(program[entry.offset..<entry.offset + entry.length])
            switch entry.tag {
            case "glyf": data = rebuilt.glyf
            case "loca": data = rebuilt.loca
            case "head":
                guard data.count >= 54 else { return nil }
                data[8...11] = [0, 0, 0, 0]    // checkSumAdjustment, set below
                data[50...51] = [0, rebuilt.short ? 0 : 1]
            case "post":
                // Version 3: no glyph names (32 KB of them in DejaVu), which a PDF reader does not use.
                guard data.count >= 32 else { return nil }
                data = [0, 3, 0, 0] + data[4..<32]
            default: break
            }
            parts.append((entry.tag, data))
        }
        return FontProgram.assembled(parts)
    }

    /// The font has a glyph for this Latin-1 character.
    public func has(_ code: UInt32) -> Bool { code <= 0xFFFF && advances[UInt16(code)] != nil }

    /// Advance width of a Latin-1 character in 1/1000 of the font size (0 for one the font lacks).
    public func width(_ code: Int) -> Int {
        guard code >= 0, code <= 0xFFFF, let advance = advances[UInt16(code)] else { return 0 }
        return Int((Double(advance) * 1000 / Double(unitsPerEm)).rounded())
    }

    func scaled(_ value: Int) -> Int { Int((Double(value) * 1000 / Double(unitsPerEm)).rounded()) }
}

/// The bytes of a TrueType font program, read big-endian (nil past the end), and the steps of
/// `TrueTypeFont.subset`.
private struct FontProgram {
    let bytes: [UInt8]

    /// Where the outlines are: the `glyf` table's offset, the glyph count (`maxp`) and each glyph's offset in
    /// `glyf` (`loca`, short or long).
    struct Outlines {
        let glyf: Int
        let glyphCount: Int
        let location: (Int) -> Int?
    }

    func u16(_ at: Int) -> Int? { at >= 0 && at + 2 <= bytes.count ? Int(bytes[at]) << 8 | Int(bytes[at + 1]) : nil }
    func u32(_ at: Int) -> Int? { guard let hi = u16(at), let lo = u16(at + 2) else { return nil }; return hi << 16 | lo }

    /// The table directory; nil when a table runs past the end.
    func tables() -> [(tag: String, offset: Int, length: Int)]? {
        guard let tableCount = u16(4) else { return nil }
        var tables: [(tag: String, offset: Int, length: Int)] = []
        for index in 0..<tableCount {
            let record = 12 + 16 * index
            guard let offset = u32(record + 8), let length = u32(record + 12), offset + length <= bytes.count else { return nil }
            tables.append((String(decoding: bytes[record..<record + 4], as: UTF8.self), offset, length))
        }
        return tables
    }

    /// The glyphs shown, and (for composite glyphs such as accented letters) the glyphs they are made of.
    func glyphs(_ shown: [Int], withComponentsIn outlines: Outlines) -> Set<Int> {
        var keep: Set<Int> = []
        var pending = shown
        while let glyph = pending.popLast() {
            guard glyph < outlines.glyphCount, keep.insert(glyph).inserted else { continue }
            guard let start = outlines.location(glyph), let end = outlines.location(glyph + 1), end > start,
                  let contours = u16(outlines.glyf + start), contours >= 0x8000
            else { continue }
            var at = outlines.glyf + start + 10
            while let flags = u16(at), let component = u16(at + 2) {
                pending.append(component)
                at += 4 + (flags & 1 != 0 ? 4 : 2) + (flags & 8 != 0 ? 2 : flags & 0x40 != 0 ? 4 : flags & 0x80 != 0 ? 8 : 0)
                if flags & 0x20 == 0 { break }
            }
        }
        return keep
    }

    /// New `glyf` and `loca` tables with the outlines of `keep` only, every other glyph empty; `short` when `loca`
    /// has short offsets (half the real ones; every glyph starts at an even offset: outlines under 128 KB).
    func outlines(keeping keep: Set<Int>, of outlines: Outlines) -> (glyf: [UInt8], loca: [UInt8], short: Bool)? {
        var newGlyf: [UInt8] = [], offsets: [Int] = []
        for glyph in 0...outlines.glyphCount {
            offsets.append(newGlyf.count)
            guard glyph < outlines.glyphCount, keep.contains(glyph) else { continue }
            guard let start = outlines.location(glyph), let end = outlines.location(glyph + 1), start <= end,
                  outlines.glyf + end <= bytes.count
            else { return nil }
            newGlyf += bytes[(outlines.glyf + start)..<(outlines.glyf + end)]
            while newGlyf.count % 4 != 0 { newGlyf.append(0) }
        }
        let short = newGlyf.count < 0x20000
        var newLoca: [UInt8] = []
        for offset in offsets {
            if short { newLoca += [UInt8((offset / 2) >> 8), UInt8((offset / 2) & 0xFF)] } else { Self.append32(offset, to: &newLoca) }
        }
        return (newGlyf, newLoca, short)
    }

    /// A font file of `parts`: the table directory with each table's checksum, the tables 4-byte aligned, and
    /// `head`'s checkSumAdjustment.
    static func assembled(_ parts: [(tag: String, data: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = [0, 1, 0, 0, UInt8(parts.count >> 8), UInt8(parts.count & 0xFF)]
        var power = 1, log = 0
        while power * 2 <= parts.count { power *= 2; log += 1 }
        for value in [power * 16, log, parts.count * 16 - power * 16] { out += [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        var offset = 12 + 16 * parts.count
        var headOffset = 0
        for part in parts {
            out += Array(part.tag.utf8)
            append32(Int(checksum(part.data)), to: &out)
            append32(offset, to: &out)
            append32(part.data.count, to: &out)
            if part.tag == "head" { headOffset = offset }
            offset += (part.data.count + 3) / 4 * 4
        }
        for part in parts {
            out += part.data
            while out.count % 4 != 0 { out.append(0) }
        }
        let adjustment = Int(0xB1B0_AFBA &- checksum(out))
        out[(headOffset + 8)...(headOffset + 11)] = [UInt8(adjustment >> 24 & 0xFF), UInt8(adjustment >> 16 & 0xFF),
                                                    UInt8(adjustment >> 8 & 0xFF), UInt8(adjustment & 0xFF)][...]
        return out
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var sum: UInt32 = 0
        for index in stride(from: 0, to: bytes.count, by: 4) {
            var word: UInt32 = 0
            for byte in 0..<4 { word = word << 8 | UInt32(index + byte < bytes.count ? bytes[index + byte] : 0) }
            sum = sum &+ word
        }
        return sum
    }

    static func append32(_ value: Int, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
