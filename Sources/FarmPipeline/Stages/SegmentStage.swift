import FarmCore
import Leptonica

/// Where the document is in a photo, like Vision's document segmentation.
public struct DocumentDetection: Sendable {
    /// Corners in the image's pixels: top left, top right, bottom right, bottom left.
    public internal(set) var corners: Quad
    /// 0…1: how sure the detector is that `corners` outline a document.
    public internal(set) var confidence: Double
    /// True when the page fills the frame (a flat scan): nothing to crop or warp.
    public internal(set) var isFullFrame: Bool
    /// A low-resolution mask of the document (255 inside).
    public internal(set) var mask: GrayPixels
    public let imageWidth: Int
    public let imageHeight: Int
    /// How much the frame's border looks like blank paper (`DocumentDetector.flatPageConfidence`): a flat scan's
    /// is at or above `DocumentDetector.flatPageForBox`.
    public var flatness: Double = 0
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
            ("flatness", .rounded(flatness, places: 4)),
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
/// confidence recorded. With the learned document mask installed (`LazyDocumentMask`), every photo that is not a
/// flat scan is also seen by the mask, whose outline replaces the detector's where the detector is unsure and the
/// mask disagrees, or where the mask reads most of the detector's sure outline as no document (DocumentMask+Choice.swift);
/// its evidence is in the findings under "document_mask".
public struct SegmentStage: PageStage {
    public let name = CorrectionStage.segment.rawValue
    let documentMask: LazyDocumentMask?

    /// The stage; with `documentMask`, the learned mask weighs in on photos.
    public init(documentMask: LazyDocumentMask? = nil) {
        self.documentMask = documentMask
    }

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            var detection = try DocumentDetector.detect(image)
            var findings = detection.json
            if let documentMask {
                let (combined, said) = try documentMask.weigh(detection, image: image)
                detection = combined
                findings = detection.json
                if case .object(var fields) = findings {
                    fields.append(("document_mask", said))
                    findings = .object(fields)
                }
            }
            context.document = detection
            context.record(name, findings)
            return image
        } catch {
            throw error.failure(name)
        }
    }
}
