import FarmCore
import Leptonica
#if canImport(Glibc)
import Glibc
#endif

/// The evidence for a chosen quadrilateral, and the confidence made from it.
///
/// The weakest side's edge support × contrast says whether every side was seen, but sits near 1 for a wrong
/// quadrilateral whose sides are real lines of the clutter as much as for the document. So the confidence is a
/// small logistic model over evidence that a wrong outline tends to lack: how far the colors step across its
/// weakest side (not only whether they differ), how far its corners are from right angles, whether another,
/// different quadrilateral was nearly as convincing, how much of the frame's border is paper, whether the frame
/// cuts it, and the weakest side itself. It was fitted on per-frame evidence (`inspect --json`'s `evidence`,
/// `Scripts/bench/real --corner-evidence`) of the MIDV-500 and SmartDoc photos, with the flat scans' best
/// quadrilaterals as negatives, and cross-validated by leaving one group out (a MIDV-500 document type, whose
/// frames share their clips' backgrounds; SmartDoc; each flat set).
extension DocumentDetector {
    struct Evidence {
        /// The raw confidence: the weakest real side's √(support × contrast), 0.9× with a side on the frame.
        var weakest = 0.0
        var minimumSupport = 0.0
        var minimumContrast = 0.0
        /// The smallest, over real sides, of the median color step across the side (gray levels, the channel
        /// that steps most), as log2(1 + step).
        var weakestStep = 0.0
        /// The largest departure of a corner from a right angle, degrees (perspective adds some).
        var worstAngle = 0.0
        /// Longer over shorter side, as log2.
        var aspect = 0.0
        /// The document's share of the frame.
        var area = 0.0
        var cutByFrame = 0.0
        /// The best score of a distinct hypothesis (IoU < 0.5 with this one) over this one's: near 1 when the
        /// choice was a toss-up.
        var rival = 0.0
        var flatness = 0.0

        var named: [(String, Double)] {
            [("weakest", weakest), ("min_support", minimumSupport), ("min_contrast", minimumContrast),
             ("weakest_step", weakestStep), ("worst_angle", worstAngle), ("aspect", aspect), ("area", area),
             ("cut_by_frame", cutByFrame), ("rival", rival), ("flatness", flatness)]
        }
    }

    static func evidence(for best: Candidate, among hypotheses: [Candidate], corners: Quad, planes: ColorPixels,
                         flatness: Double, width: Double, height: Double) -> Evidence
    {
        var evidence = Evidence()
        evidence.weakest = best.confidence
        let real = (0..<4).filter { !best.sides[$0].isBorder }
        evidence.minimumSupport = real.map { best.supports[$0] }.min() ?? 0
        evidence.minimumContrast = real.map { best.contrasts[$0] }.min() ?? 0
        let steps = real.map { k in
            colorStep(from: best.corners[(k + 3) % 4], to: best.corners[k], normal: best.sides[k].normal, planes)
        }
        evidence.weakestStep = log2(1 + (steps.min() ?? 0))
        let c = corners.corners
        evidence.worstAngle = (0..<4).map { k in
            let a = c[(k + 3) % 4] - c[k], b = c[(k + 1) % 4] - c[k]
            let cosine = (a.x * b.x + a.y * b.y) / max(1e-9, a.distance(to: Point(0, 0)) * b.distance(to: Point(0, 0)))
            return abs(acos(min(1, max(-1, cosine))) * 180 / .pi - 90)
        }.max() ?? 0
        let first = (c[0].distance(to: c[1]) + c[2].distance(to: c[3])) / 2
        let second = (c[1].distance(to: c[2]) + c[3].distance(to: c[0])) / 2
        evidence.aspect = log2(max(first, second) / max(1, min(first, second)))
        let frame = Quad(width: width, height: height)
        // The part inside the frame, from the overlap: IoU = I / (A + F − I).
        let overlap = corners.iou(with: frame)
        evidence.area = overlap * (corners.area + frame.area) / (1 + overlap) / (width * height)
        evidence.cutByFrame = best.sides.contains(where: \.isBorder) ? 1 : 0
        let own = Quad(ordered(best.corners))
        let rivals = hypotheses.filter { own.iou(with: Quad(ordered($0.corners))) < 0.5 }.map(\.score)
        evidence.rival = best.score > 0 ? max(0, rivals.max() ?? 0) / best.score : 0
        evidence.flatness = flatness
        return evidence
    }

    /// The median, along the side's visible part, of the largest channel step between the colors a few pixels
    /// inside and outside it (gray levels). `contrast` counts where the step clears a bar; this says how high it
    /// is, so that a side drawn between two dark materials weighs less than a card's edge against a desk.
    static func colorStep(from start: Point, to end: Point, normal: Point, _ planes: ColorPixels) -> Double {
        let width = Double(planes.width), height = Double(planes.height)
        func inImage(_ p: Point) -> Bool { p.x >= 0 && p.y >= 0 && p.x <= width - 1 && p.y <= height - 1 }
        var steps: [Double] = []
        for s in 0..<40 {
            let p = start + (end - start) * (0.05 + 0.9 * Double(s) / 39)
            let inside = [p + normal * 3, p + normal * 5], outside = [p - normal * 3, p - normal * 5]
            guard (inside + outside).allSatisfy(inImage) else { continue }
            var strongest = 0.0
            for plane in [planes.red, planes.green, planes.blue] {
                let a = inside.reduce(0) { $0 + bilinear(plane, planes, $1) } / 2
                let b = outside.reduce(0) { $0 + bilinear(plane, planes, $1) } / 2
                strongest = max(strongest, abs(a - b))
            }
            steps.append(strongest)
        }
        guard steps.count >= 4 else { return 0 }
        return steps.sorted()[steps.count / 2]
    }

    /// The model: log-odds from the evidence. Fitted as an ordinal logistic
    /// model (one set of weights, one intercept each for "IoU ≥ 0.85" and "IoU ≥ 0.99", so that the ranking among
    /// good frames counts too), L2-regularized (C = 0.3 on standardized evidence), on the 66 MIDV-500 and
    /// SmartDoc frames (midv500_04_04 left out: its ground truth lies 25–40 px off the card) and the best
    /// quadrilaterals of the flat scans (docbank, SROIE, phone-scan-ru, ocrd-degraded-and-camera) that stay the
    /// full frame. Corner angles, aspect and area were tried and left out: cross-validated, the rank correlation
    /// over the photos was +0.39, +0.32 and +0.41 with them against +0.39 without, and area rated the edgeless
    /// outlines of the thesis photos sure.
    static func logOdds(_ e: Evidence) -> Double {
        -3.3120 + 2.5111 * e.weakest + 0.8474 * e.weakestStep - 0.8455 * e.rival - 4.9534 * e.flatness
            - 0.9717 * e.cutByFrame
    }

    /// The confidence from the evidence: the logistic model, except that an outline whose edges and colors alone
    /// fall below the threshold is never made sure by the rest (a box on a scan with a clean step across it and
    /// no rival is still a box): edges are necessary, the rest says how much to trust them.
    static func calibratedConfidence(_ evidence: Evidence) -> Double {
        let modelled = 1 / (1 + exp(-logOdds(evidence)))
        return evidence.weakest < RectifyStage.minimumConfidence ? min(modelled, evidence.weakest) : modelled
    }
}
