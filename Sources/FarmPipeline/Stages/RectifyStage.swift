import FarmCore
import Leptonica

/// rectify: perspective correction from the document's corners to an upright rectangle with the document's
/// true aspect ratio.
public struct RectifyStage: PageStage {
    public let name = "rectify"
    /// Keep color through the warp (only when the kept image is to be in color; warping gray is 3× cheaper).
    var keepColor = true
    /// Below this confidence the segmentation is not trusted and the page goes on uncropped.
    static let minimumConfidence = 0.5

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        guard let document = context.document, !document.isFullFrame, document.confidence >= Self.minimumConfidence else {
            context.record(name, .object([("applied", false)]))
            return image
        }
        let quad = document.corners
        let aspect = Self.aspectRatio(of: quad, imageWidth: Double(image.width), imageHeight: Double(image.height))
        // Keep about as many pixels as the page had in the photo: no information is invented here.
        let top = quad.topLeft.distance(to: quad.topRight), bottom = quad.bottomLeft.distance(to: quad.bottomRight)
        let left = quad.topLeft.distance(to: quad.bottomLeft), right = quad.topRight.distance(to: quad.bottomRight)
        var width = max(top, bottom)
        var height = width / aspect
        if height < max(left, right) {
            height = max(left, right)
            width = height * aspect
        }
        let w = Int(width.rounded()), h = Int(height.rounded())
        let target = Quad(width: Double(w), height: Double(h))
        guard let map = Homography.mapping(from: quad.corners, to: target.corners) else {
            context.record(name, .object([("applied", false), ("reason", "degenerate corners")]))
            return image
        }
        do throws(LeptonicaError) {
            let source = keepColor || image.depth != 32 ? image : try image.luminance()
            let warped = try source.rectified(corners: quad.corners.map { PixelPoint(x: $0.x, y: $0.y) }, width: w, height: h)
            context.toPage = context.toPage.then(map)
            context.resolution = 0  // unknown after a warp: Tesseract estimates it from the text
            context.record(name, .object([("applied", true), ("width", JSON(w)), ("height", JSON(h)),
                                          ("aspect", .rounded(aspect, places: 4)), ("homography", map.json)]))
            return warped
        } catch {
            throw error.failure(name)
        }
    }

    /// Width ÷ height of the real rectangle seen as `quad`, by Zhang and He's whiteboard method with the principal
    /// point at the image center and the focal length fixed at 0.9 × the image's longer side (typical of phone
    /// cameras; solving for it is unstable near frontal views); the mean side ratio when that cannot be computed.
    static func aspectRatio(of quad: Quad, imageWidth: Double, imageHeight: Double) -> Double {
        let u0 = imageWidth / 2, v0 = imageHeight / 2
        let focal = 0.9 * max(imageWidth, imageHeight)
        let m1 = [quad.topLeft.x, quad.topLeft.y, 1.0], m2 = [quad.topRight.x, quad.topRight.y, 1.0]
        let m3 = [quad.bottomLeft.x, quad.bottomLeft.y, 1.0], m4 = [quad.bottomRight.x, quad.bottomRight.y, 1.0]
        func cross(_ a: [Double], _ b: [Double]) -> [Double] {
            [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
        }
        func dot(_ a: [Double], _ b: [Double]) -> Double { a[0] * b[0] + a[1] * b[1] + a[2] * b[2] }
        let sideRatio = (quad.topLeft.distance(to: quad.topRight) + quad.bottomLeft.distance(to: quad.bottomRight))
            / max(1, quad.topLeft.distance(to: quad.bottomLeft) + quad.topRight.distance(to: quad.bottomRight))
        let k2 = dot(cross(m1, m4), m3) / dot(cross(m2, m4), m3)
        let k3 = dot(cross(m1, m4), m2) / dot(cross(m3, m4), m2)
        guard k2.isFinite, k3.isFinite else { return sideRatio }
        let n2 = [k2 * m2[0] - m1[0], k2 * m2[1] - m1[1], k2 * m2[2] - m1[2]]
        let n3 = [k3 * m3[0] - m1[0], k3 * m3[1] - m1[1], k3 * m3[2] - m1[2]]
        // nᵀ A⁻ᵀ A⁻¹ n with A = [[f, 0, u0], [0, f, v0], [0, 0, 1]].
        func norm(_ n: [Double]) -> Double {
            let a = n[0] - u0 * n[2], b = n[1] - v0 * n[2]
            return (a * a + b * b) / (focal * focal) + n[2] * n[2]
        }
        let ratio = (norm(n2) / norm(n3)).squareRoot()
        guard ratio.isFinite, ratio > 0.1, ratio < 10 else { return sideRatio }
        return ratio
    }
}
