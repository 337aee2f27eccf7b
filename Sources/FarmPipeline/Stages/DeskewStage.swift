import FarmCore
import Leptonica

/// deskew: straightens small rotations (within ±15°) measured from the text lines.
public struct DeskewStage: PageStage {
    public let name = CorrectionStage.deskew.rawValue
    /// Angles smaller than this are left alone: rotating costs sharpness for nothing.
    static let minimumAngle = 0.1
    /// Leptonica's confidence (ratio of projection scores) needed to act.
    static let minimumConfidence = 2.5

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            guard let (angle, confidence) = try image.skewAngle(range: 15) else {
                context.record(name, .object([("angle", 0), ("applied", false), ("reason", "too little text")]))
                return image
            }
            let apply = abs(angle) >= Self.minimumAngle && confidence >= Self.minimumConfidence
            context.record(name, .object([("angle", .rounded(angle)), ("confidence", .rounded(confidence)),
                                          ("applied", JSON(apply))]))
            guard apply else { return image }
            // Leptonica's angle is the skew; rotating by it (clockwise positive) straightens the lines.
            let rotated = try Self.turnable(image, context).rotated(byDegrees: angle)
            context.toPage = context.toPage.then(Self.rotation(degrees: angle, from: image, to: rotated))
            return rotated
        } catch {
            throw error.failure(name)
        }
    }

    /// The image to turn: a bilevel (or 2- or 4-bit) page as gray when the page's memory allows. Leptonica turns
    /// a 1-bit image by shearing it, which leaves stair steps along every stroke that Tesseract reads as other
    /// letters ("Manor" as "Manot", "from" as "fom" on UNLV 8071, turned 0.42°); a gray copy is turned by area
    /// mapping, which keeps the edges smooth. The enhance stage makes the page gray next anyway.
    static func turnable(_ image: Pix, _ context: PageContext) throws(LeptonicaError) -> Pix {
        guard image.depth < 8, context.fits(image, bytesPerPixel: 2) else { return image }
        return try image.grayscale()
    }

    /// The map of a rotation by `degrees` clockwise about the center, with the canvas grown to `to`'s size.
    static func rotation(degrees: Double, from: Pix, to: Pix) -> Homography {
        let center = (Double(from.width) / 2, Double(from.height) / 2)
        let newCenter = (Double(to.width) / 2, Double(to.height) / 2)
        return Homography.translation(-center.0, -center.1)
            .then(.rotation(degrees * .pi / 180))
            .then(.translation(newCenter.0, newCenter.1))
    }
}
