import FarmCore
import Leptonica

/// A page or line image as the networks see it: one gray plane or three planes in blue, green, red order (the
/// order the PaddleOCR models were trained on), 8 bits a sample, rows top down. A value type: no C memory.
struct NeuralImage: Sendable, Equatable {
    let width: Int
    let height: Int
    /// One plane (gray) or three (blue, green, red), each `width * height` samples.
    var planes: [[UInt8]]

    init(width: Int, height: Int, planes: [[UInt8]]) {
        precondition(planes.count == 1 || planes.count == 3)
        precondition(planes.allSatisfy { $0.count == width * height })
        self.width = width
        self.height = height
        self.planes = planes
    }

    /// The pixels of `pix`: gray unless it holds colour (32 bits a pixel).
    init(_ pix: Pix) throws(LeptonicaError) {
        if pix.depth == 32 {
            let colour = try pix.colorPixels()
            self.init(width: colour.width, height: colour.height, planes: [colour.blue, colour.green, colour.red])
        } else {
            let gray = try pix.grayPixels()
            self.init(width: gray.width, height: gray.height, planes: [gray.data])
        }
    }

    /// The sample of plane `plane` at pixel `(x, y)`, with coordinates clamped to the image (edge replicated).
    @inline(__always)
    func sample(_ plane: Int, _ x: Int, _ y: Int) -> UInt8 {
        planes[plane][min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)]
    }

    /// Bilinear interpolation at a point in pixel-centre coordinates, edges replicated.
    @inline(__always)
    static func bilinear(_ plane: UnsafeBufferPointer<UInt8>, width: Int, height: Int, x: Double, y: Double) -> Double {
        let fx = x.rounded(.down), fy = y.rounded(.down)
        let ax = x - fx, ay = y - fy
        let x0 = Int(fx), y0 = Int(fy)
        let cx0 = min(max(x0, 0), width - 1), cx1 = min(max(x0 + 1, 0), width - 1)
        let cy0 = min(max(y0, 0), height - 1), cy1 = min(max(y0 + 1, 0), height - 1)
        let top = Double(plane[cy0 * width + cx0]) * (1 - ax) + Double(plane[cy0 * width + cx1]) * ax
        let bottom = Double(plane[cy1 * width + cx0]) * (1 - ax) + Double(plane[cy1 * width + cx1]) * ax
        return top * (1 - ay) + bottom * ay
    }

    /// The image resized to `newWidth` × `newHeight` by bilinear interpolation with pixel centres aligned (as
    /// OpenCV's `INTER_LINEAR`, which the reference pipeline uses: no smoothing when shrinking).
    func resized(width newWidth: Int, height newHeight: Int) -> NeuralImage {
        let sx = Double(width) / Double(newWidth), sy = Double(height) / Double(newHeight)
        let resizedPlanes = planes.map { plane in
            plane.withUnsafeBufferPointer { source in
                var out = [UInt8](repeating: 0, count: newWidth * newHeight)
                for y in 0..<newHeight {
                    let srcY = max(0, (Double(y) + 0.5) * sy - 0.5)
                    for x in 0..<newWidth {
                        let srcX = max(0, (Double(x) + 0.5) * sx - 0.5)
                        let value = Self.bilinear(source, width: width, height: height, x: srcX, y: srcY)
                        out[y * newWidth + x] = UInt8(min(255, max(0, value.rounded())))
                    }
                }
                return out
            }
        }
        return NeuralImage(width: newWidth, height: newHeight, planes: resizedPlanes)
    }

    /// The quadrilateral `region` of this image (corners top left, top right, bottom right, bottom left) warped
    /// to a `cropWidth` × `cropHeight` rectangle by the perspective transform taking the corners to the
    /// rectangle's, sampled bilinearly with edges replicated. Nil when the corners are degenerate.
    func warped(_ region: [Point], width cropWidth: Int, height cropHeight: Int) -> NeuralImage? {
        guard cropWidth > 0, cropHeight > 0,
              let toCrop = Homography.mapping(from: region, to: Quad(width: Double(cropWidth), height: Double(cropHeight)).corners),
              let toPage = toCrop.inverse else { return nil }
        let m = toPage.m
        let warpedPlanes = planes.map { plane in
            plane.withUnsafeBufferPointer { source in
                var out = [UInt8](repeating: 0, count: cropWidth * cropHeight)
                for y in 0..<cropHeight {
                    for x in 0..<cropWidth {
                        let u = Double(x), v = Double(y)
                        let w = m[6] * u + m[7] * v + m[8]
                        guard w != 0 else { continue }
                        let px = (m[0] * u + m[1] * v + m[2]) / w, py = (m[3] * u + m[4] * v + m[5]) / w
                        let value = Self.bilinear(source, width: width, height: height, x: px, y: py)
                        out[y * cropWidth + x] = UInt8(min(255, max(0, value.rounded())))
                    }
                }
                return out
            }
        }
        return NeuralImage(width: cropWidth, height: cropHeight, planes: warpedPlanes)
    }

    /// The image turned a quarter counter-clockwise (NumPy's `rot90`): pixel `(x, y)` of the result is pixel
    /// `(width − 1 − y, x)` of this one.
    func rotatedCounterClockwise() -> NeuralImage {
        let newWidth = height, newHeight = width
        let turned = planes.map { plane in
            var out = [UInt8](repeating: 0, count: plane.count)
            for y in 0..<newHeight {
                for x in 0..<newWidth { out[y * newWidth + x] = plane[x * width + (width - 1 - y)] }
            }
            return out
        }
        return NeuralImage(width: newWidth, height: newHeight, planes: turned)
    }

    /// The image turned upside down.
    func rotatedHalfTurn() -> NeuralImage {
        NeuralImage(width: width, height: height, planes: planes.map { Array($0.reversed()) })
    }

    /// Writes the image, resized to `height` rows and `resizedWidth` columns, normalized as `(x/255 − 0.5)/0.5`,
    /// into `tensor` (3 planes of `height` × `paddedWidth` floats, starting at `offset`); columns past
    /// `resizedWidth` are left as they are (zero padding). A gray image fills all three planes.
    func writeNormalized(into tensor: inout [Float], offset: Int, height: Int, resizedWidth: Int, paddedWidth: Int) {
        let resized = resized(width: resizedWidth, height: height)
        let planeSize = height * paddedWidth
        for channel in 0..<3 {
            let plane = resized.planes[resized.planes.count == 3 ? channel : 0]
            for y in 0..<height {
                let row = offset + channel * planeSize + y * paddedWidth
                for x in 0..<resizedWidth { tensor[row + x] = Float(plane[y * resizedWidth + x]) / 127.5 - 1 }
            }
        }
    }
}
