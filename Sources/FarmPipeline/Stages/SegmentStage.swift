import FarmCore
import Leptonica

/// Where the document is in a photo, like Vision's document segmentation.
public struct DocumentDetection: Sendable {
    /// Corners in the image's pixels: top left, top right, bottom right, bottom left.
    public let corners: Quad
    /// 0…1: how sure the detector is that `corners` outline a document.
    public let confidence: Double
    /// True when the page fills the frame (a flat scan): nothing to crop or warp.
    public let isFullFrame: Bool
    /// A low-resolution mask of the document (255 inside).
    public let mask: GrayPixels
    public let imageWidth: Int
    public let imageHeight: Int
    /// What the confidence was made from (DocumentDetector+Confidence.swift), for `inspect --json`; empty when no
    /// quadrilateral was weighed.
    public var evidence: [(String, Double)] = []
    /// The quadrilateral that was weighed, also when the frame was kept.
    public var candidate: Quad? = nil

    public var boundingBox: Rect {
        let xs = corners.corners.map(\.x), ys = corners.corners.map(\.y)
        let x = Int(xs.min()!.rounded(.down)), y = Int(ys.min()!.rounded(.down))
        return Rect(x: x, y: y, width: Int(xs.max()!.rounded(.up)) - x, height: Int(ys.max()!.rounded(.up)) - y)
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [
            ("corners", corners.json),
            ("normalized_corners", .array(corners.normalized(width: Double(imageWidth), height: Double(imageHeight))
                .corners.map { [.rounded($0.x, places: 4), .rounded($0.y, places: 4)] })),
            ("confidence", .rounded(confidence, places: 3)),
            ("full_frame", JSON(isFullFrame)),
            ("bounding_box", boundingBox.json),
            ("mask_size", [JSON(mask.width), JSON(mask.height)]),
        ]
        if !evidence.isEmpty { fields.append(("evidence", .object(evidence.map { ($0.0, .rounded($0.1, places: 4)) }))) }
        if let candidate { fields.append(("candidate", candidate.json)) }
        return .object(fields)
    }
}

/// segment: finds the document in a photo (four corners, a confidence, a mask). A flat scan that is already the
/// page reports the full frame. When nothing convincing is found, the page goes on uncropped with the low
/// confidence recorded.
public struct SegmentStage: PageStage {
    public let name = CorrectionStage.segment.rawValue

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            let detection = try DocumentDetector.detect(image)
            context.document = detection
            context.record(name, detection.json)
            return image
        } catch {
            throw error.failure(name)
        }
    }
}
