import FarmCore
import Leptonica

/// Pictures that show what the pipeline saw.
public enum Highlight {
    /// The photo with everything outside the document tinted mauve and the outline and corners drawn.
    public static func document(_ image: Pix, corners: Quad) throws(LeptonicaError) -> Pix {
        var pixels = try image.colorPixels()
        let (w, h) = (pixels.width, pixels.height)
        let c = corners.corners
        // Orientation of the quad, so "inside" is the same side of every edge.
        let turn = (c[1].x - c[0].x) * (c[2].y - c[1].y) - (c[1].y - c[0].y) * (c[2].x - c[1].x) >= 0 ? 1.0 : -1.0
        for y in 0..<h {
            let py = Double(y) + 0.5
            for x in 0..<w {
                let px = Double(x) + 0.5
                var inside = true
                for i in 0..<4 {
                    let a = c[i], b = c[(i + 1) % 4]
                    if turn * ((b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x)) < 0 { inside = false; break }
                }
                if inside { continue }
                let i = y * w + x
                // Apple's sample tints the background mauve: blend halfway toward (224, 176, 255).
                pixels.red[i] = UInt8((Int(pixels.red[i]) + 224) / 2)
                pixels.green[i] = UInt8((Int(pixels.green[i]) + 176) / 2)
                pixels.blue[i] = UInt8((Int(pixels.blue[i]) + 255) / 2)
            }
        }
        let result = try Pix(color: pixels)
        let line = max(2, min(w, h) / 300)
        for i in 0..<4 {
            let a = c[i], b = c[(i + 1) % 4]
            result.drawLine(from: PixelPoint(x: a.x, y: a.y), to: PixelPoint(x: b.x, y: b.y), width: line, red: 120, green: 40, blue: 200)
        }
        let mark = Double(line * 6)
        for p in c {
            result.drawLine(from: PixelPoint(x: p.x - mark, y: p.y), to: PixelPoint(x: p.x + mark, y: p.y), width: line * 2,
                            red: 255, green: 40, blue: 40)
            result.drawLine(from: PixelPoint(x: p.x, y: p.y - mark), to: PixelPoint(x: p.x, y: p.y + mark), width: line * 2,
                            red: 255, green: 40, blue: 40)
        }
        return result
    }
}
