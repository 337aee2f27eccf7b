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

    /// "x y" pairs of a box's quadrilateral in the original image, mapped once (`ExportPage.Mapped`), `inner` between a
    /// point's coordinates and a space between points: hOCR's `poly 1 2 3 4 …`, ALTO's and PAGE's `1,2 3,4 …`.
    mutating func add(polygon box: ExportPage.Mapped, inner: UInt8) {
        let p = box.polygon
        add(p.x0); append(inner); add(p.y0); append(UInt8(ascii: " "))
        add(p.x1); append(inner); add(p.y1); append(UInt8(ascii: " "))
        add(p.x2); append(inner); add(p.y2); append(UInt8(ascii: " "))
        add(p.x3); append(inner); add(p.y3)
    }
}
