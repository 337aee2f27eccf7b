import FarmCore

/// The renderers write their documents as UTF-8 bytes appended in place (`ByteWriter`): every page is rendered at
/// export (render on demand), so no String is built per element and nothing is allocated per word.
extension ByteWriter {
    /// A rectangle's left, top, right and bottom, a space between them (hOCR's `bbox`).
    mutating func add(edges r: Rect) {
        add(r.x); append(UInt8(ascii: " ")); add(r.y); append(UInt8(ascii: " ")); add(r.maxX); append(UInt8(ascii: " ")); add(r.maxY)
    }

    /// A number as `String(value)` writes it.
    @inline(__always)
    mutating func add(_ value: Int) { JSON.write(value, into: &self) }

    /// `text` escaped for XML (`XML.escaped`).
    @inline(__always)
    mutating func add(escaped text: String) { XML.escape(text, into: &self) }

    /// "x y" pairs of a box's quadrilateral (`ExportPage.polygon`), `inner` between a point's coordinates and a space
    /// between points: hOCR's `poly 1 2 3 4 …`, ALTO's and PAGE's `1,2 3,4 …`.
    mutating func add(polygon box: Rect, of page: ExportPage, inner: UInt8) {
        let (a, b, c, d) = page.corners(box)
        add(page.clampedX(a.x)); append(inner); add(page.clampedY(a.y)); append(UInt8(ascii: " "))
        add(page.clampedX(b.x)); append(inner); add(page.clampedY(b.y)); append(UInt8(ascii: " "))
        add(page.clampedX(c.x)); append(inner); add(page.clampedY(c.y)); append(UInt8(ascii: " "))
        add(page.clampedX(d.x)); append(inner); add(page.clampedY(d.y))
    }
}
