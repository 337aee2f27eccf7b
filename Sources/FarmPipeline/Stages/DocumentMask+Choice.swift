import FarmCore
import FarmRuntime
import Leptonica
import ONNXRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Today's detector and the learned mask together (issue 39; Training/mask/combine.py, decision 0093 stop 41, its
/// confidence refitted on the clear composites of decision 0096). The mask's outline replaces the detector's only
/// where the mask does not fill the detector's quadrilateral (that quadrilateral is mostly desk or another sheet: the
/// whole frame, a sheet under the target) and the detector is unsure of its own (below RectifyStage's threshold: the
/// page would go uncropped), or is sure of one, not the whole frame, that the mask fills less than half of (a strip
/// of dark desk; decision 0104), and the photo shows edges under the mask outline's sides (decisions 0100, 0101;
/// combine.py's `takes_mask` has decision 0093's first rule only: its weights are used as they are). Either way
/// the confidence is a logistic model over the chosen outline's evidence: which outline it is, the detector's own
/// confidence (its outline only), how far both outlines agree, how much of the chosen one the mask fills.
extension DocumentMask {
    /// The photos the mask knows: colour (it saw nothing else; a gray or bilevel image is a scan, or a copy of
    /// one), trained on composites 480–1280 px on the long side and checked on real frames of 1920: at least this
    /// long side...
    static let smallestPhoto = 480
    /// ...and no side more than this many times the other (a phone's 20:9 is 2.2). Smaller images and strips (a
    /// figure or table cut from a page, squashed out of shape to the model's square) are left to the detector.
    static let widestPhoto = 2.4
    /// A larger photo is shown to the mask shrunk to this long side (the edge fit works at 1024 px).
    static let largestPhoto = 2048.0

    /// The share of the detector's quadrilateral the mask must fill for that quadrilateral to stand, when the detector
    /// is unsure of it...
    static let detectorFilled = 0.7
    /// ...and when it is sure (decision 0104): a quadrilateral more than half of which the mask reads as no document
    /// is another thing's outline (a dark strip of desk, a sheet beside the page), however sharp its sides.
    static let sureDetectorFilled = 0.5
    /// How many of the mask outline's four sides must lie on a straight edge of the photo, or along its border, for
    /// it to be taken (decisions 0100 and 0101): most of the outline borne out by the photo, at most one side the
    /// mask's guess.
    static let minimumEdgeSides = 3

    /// The confidence model's weights (combine.py's `fit_confidence` on its design sets: midv500's training types
    /// and 150 training-pool composites, stop-42 model; `combine.py report` prints them). The mask region's
    /// solidity, combine.py's sixth feature, weighed +0.0165 there (under 0.02 in log-odds): left out.
    enum Weights {
        static let detectorOutline = -1.5060
        static let maskOutline = -0.0257
        static let detectorLogOdds = 0.5228
        static let quadsIoU = 1.1149
        static let maskShare = 1.4041
    }

    /// What the mask says of the detector's outline and its own, on the upsampled grid.
    struct Evidence: Sendable, Equatable {
        /// The mask's outline in photo pixels, nil when the mask holds no region.
        var outline: Quad?
        /// The share of the detector's quadrilateral that is mask (upsampled probability > 0.5).
        var detectorFilled: Double
        /// The share of the mask's own outline that is mask (0 without one).
        var maskFilled: Double
        /// Both outlines' IoU within the frame (0 without a mask outline).
        var quadsIoU: Double
        /// How many of the mask's outline's sides lie on a straight edge of the photo (0–4).
        var edgeSides: Int = 0
        /// How many of the others lie along the photo's border, within a mask cell of it or beyond (a document the
        /// frame cuts: the frame is its edge there).
        var frameSides: Int = 0

        var json: JSON {
            var fields: [(String, JSON)] = [
                ("detector_filled", .rounded(detectorFilled, places: 4)),
                ("mask_filled", .rounded(maskFilled, places: 4)),
                ("quads_iou", .rounded(quadsIoU, places: 4)),
                ("edge_sides", JSON(edgeSides)),
                ("frame_sides", JSON(frameSides)),
            ]
            if let outline { fields.append(("outline", outline.json)) }
            return .object(fields)
        }
    }

    /// The mask's evidence on the detector's outline `corners` (in `photo`'s pixels).
    func evidence(on corners: Quad, photo: NeuralImage) throws(ONNXRuntimeError) -> Evidence {
        let grid = try grid(of: photo)
        let side = grid.size * Self.upsampling
        let values = MaskRegion.upsampled(grid, to: side)
        let fitted = Self.outline(ofUpsampled: values, side: side, width: photo.width, height: photo.height)
            .map { Self.edgeFit($0, photo: photo) }
        let outline = fitted.map { Quad(DocumentDetector.ordered($0.corners)) }
        let on = values.map { $0 > Self.regionThreshold }
        let width = Double(photo.width), height = Double(photo.height)
        func filled(_ quad: Quad) -> Double {
            Self.share(of: quad, filledBy: on, side: side, width: width, height: height)
        }
        let onFrame = fitted.map { fit in
            (0..<4).filter { !fit.sides[$0] && Self.alongBorder(fit.corners[$0], fit.corners[($0 + 1) % 4],
                                                               width: width, height: height) }.count
        } ?? 0
        return Evidence(outline: outline, detectorFilled: filled(corners), maskFilled: outline.map(filled) ?? 0,
                        quadsIoU: outline.map { corners.iou(with: $0, inFrameWidth: width, height: height) } ?? 0,
                        edgeSides: fitted?.sides.count { $0 } ?? 0, frameSides: onFrame)
    }

    /// Whether the side from `a` to `b` (photo pixels) runs along one border of a `width` × `height` photo: both
    /// ends within one mask cell of it (`inputSize` cells across the photo's long side) or beyond it.
    static func alongBorder(_ a: Point, _ b: Point, width: Double, height: Double) -> Bool {
        let cell = max(width, height) / Double(inputSize)
        return (a.x <= cell && b.x <= cell) || (a.y <= cell && b.y <= cell)
            || (a.x >= width - cell && b.x >= width - cell) || (a.y >= height - cell && b.y >= height - cell)
    }

    /// Which share of `quad` (photo pixels), drawn on the `side` × `side` grid of the squashed photo by the
    /// detector's `quadMask` (a cell in when its centre is), the set cells of `on` cover; 0 for a quadrilateral that
    /// covers no cell.
    static func share(of quad: Quad, filledBy on: [Bool], side: Int, width: Double, height: Double) -> Double {
        let squashed = Quad(quad.corners.map { Point($0.x * Double(side) / width, $0.y * Double(side) / height) })
        let drawn = DocumentDetector.quadMask(squashed, width: side, height: side, factor: 1)
        var inside = 0, covered = 0
        for (index, value) in drawn.data.enumerated() where value != 0 {
            inside += 1
            if on[index] { covered += 1 }
        }
        return inside > 0 ? Double(covered) / Double(inside) : 0
    }

    /// Whether the mask's outline replaces the detector's: the mask not filling the detector's quadrilateral (less
    /// than `detectorFilled` of it where the detector is unsure, less than half where it is sure and outlines less
    /// than the frame), at least one side of the mask's outline on a straight edge of the photo, and at least
    /// `minimumEdgeSides` on such edges or along the photo's border.
    /// An outline none of whose sides the photo shows as an edge is the mask's guess alone: a block of type on a
    /// page of card that fills the frame, the hand holding a card (decision 0100). One with two is half guessed:
    /// where the mask misses a strip of the page, a side the photo does not bear out cuts that strip off (a page's
    /// title on a pale desk, a receipt's last lines; decision 0101).
    static func takesMask(_ detection: DocumentDetection, _ evidence: Evidence) -> Bool {
        evidence.outline != nil && evidence.edgeSides > 0 && evidence.edgeSides + evidence.frameSides >= minimumEdgeSides
            && (detection.confidence < RectifyStage.minimumConfidence ? evidence.detectorFilled < detectorFilled
                : !detection.isFullFrame && evidence.detectorFilled < sureDetectorFilled)
    }

    /// The confidence of the chosen outline (the mask's when `mask`), from its evidence.
    static func confidence(_ detection: DocumentDetection, _ evidence: Evidence, mask: Bool) -> Double {
        let logit: Double
        if mask {
            logit = Weights.maskOutline + Weights.quadsIoU * evidence.quadsIoU + Weights.maskShare * evidence.maskFilled
        } else {
            let p = min(max(detection.confidence, 1e-3), 1 - 1e-3)
            logit = Weights.detectorOutline + Weights.detectorLogOdds * log(p / (1 - p))
                + Weights.quadsIoU * evidence.quadsIoU + Weights.maskShare * evidence.detectorFilled
        }
        return 1 / (1 + exp(-logit))
    }

    /// `detection` with the mask's evidence weighed: the chosen outline and its confidence; below RectifyStage's
    /// threshold the frame is kept (the chosen outline stays the candidate), as the detector keeps it.
    static func combined(_ detection: DocumentDetection, _ evidence: Evidence) -> DocumentDetection {
        let mask = takesMask(detection, evidence)
        let confidence = confidence(detection, evidence, mask: mask)
        let chosen = mask ? evidence.outline! : detection.corners
        let width = Double(detection.imageWidth), height = Double(detection.imageHeight)
        var result = detection
        result.confidence = confidence
        if confidence >= RectifyStage.minimumConfidence, mask || !detection.isFullFrame {
            result.corners = chosen
            result.isFullFrame = false
            result.candidate = chosen
            if mask {
                let factor = Double(detection.mask.width) / width
                result.mask = DocumentDetector.quadMask(chosen, width: detection.mask.width,
                                                        height: detection.mask.height, factor: factor)
            }
        } else {
            result.corners = Quad(width: width, height: height)
            result.isFullFrame = true
            if mask || !detection.isFullFrame { result.candidate = chosen }
        }
        return result
    }
}

/// One page slot's document mask, loaded on the first photo that needs it (flat scans never do): the installed model
/// (`NeuralModels.documentMaskFile`, put there by `Scripts/install-neural`) unless `OCRFARM_DOCUMENT_MASK` is "off" or
/// names another file (decision 0102). Without the runtime or the model, detection goes on as the detector alone
/// finds, and the findings say why.
public final class LazyDocumentMask {
    /// What `OCRFARM_DOCUMENT_MASK` asks for: read here only.
    enum Setting: Equatable {
        /// "off": the detector alone.
        case off
        /// Unset, empty or "on": the model `Scripts/install-neural` installed.
        case installed
        /// Anything else: the model file at that path.
        case file(String)

        init(_ value: String?) {
            switch value {
            case "off": self = .off
            case nil, "", "on": self = .installed
            case let path?: self = .file(path)
            }
        }
    }

    private let model: Setting
    private let environment: [String: String]
    private var made: DocumentMask?
    private var failure: String?
    private var tried = false

    /// A mask made on first use as `environment`'s `OCRFARM_DOCUMENT_MASK` says (unset: the installed model; "off":
    /// none, and the findings say so), found through `environment`'s neural folders.
    public convenience init(environment: [String: String] = ProcessEnvironment.current) {
        self.init(model: Setting(environment[DocumentMask.environmentKey]), environment: environment)
    }

    private init(model: Setting, environment: [String: String]) {
        self.model = model
        self.environment = environment
    }

    /// A mask unless `OCRFARM_DOCUMENT_MASK` is "off" (then nil: the detector alone, and no finding).
    public static func ifEnabled(environment: [String: String] = ProcessEnvironment.current) -> LazyDocumentMask? {
        let setting = Setting(environment[DocumentMask.environmentKey])
        return setting == .off ? nil : LazyDocumentMask(model: setting, environment: environment)
    }

    /// What the segment stage will weigh in on colour photos, for `ocrfarm version`: the model's path, "off", or why
    /// there is none. Found as a slot finds it (`located`), not loaded.
    public static func summary(environment: [String: String] = ProcessEnvironment.current) -> String {
        let setting = Setting(environment[DocumentMask.environmentKey])
        if setting == .off { return "off (\(DocumentMask.environmentKey)=off)" }
        do throws(MaskUnavailable) {
            let path = try located(setting, environment: environment).path
            return (try? FileSystem.status(path).kind) == .file ? "on, \(path)" : "missing: \(path)"
        } catch {
            return "not installed (Scripts/install-neural)"
        }
    }

    /// The neural folder (ONNX Runtime's library, needed whichever model) and the model file `setting` names in it or
    /// elsewhere, through `environment`'s neural folders.
    private static func located(_ setting: Setting, environment: [String: String])
        throws(MaskUnavailable) -> (models: NeuralModels, path: String)
    {
        if setting == .off { throw MaskUnavailable(reason: "\(DocumentMask.environmentKey) is off") }
        let models: NeuralModels
        do throws(NeuralModelsError) { models = try NeuralModels.locate(environment: environment) } catch {
            throw MaskUnavailable(reason: "the neural runtime is not installed (\(error)); run Scripts/install-neural")
        }
        switch setting {
        case .file(let named): return (models, named)
        case .installed, .off: return (models, models.documentMaskPath)  // .off: thrown above
        }
    }

    /// Whether the model has been loaded (for tests and memory accounting).
    public var isLoaded: Bool { made != nil }

    /// The mask, or why there is none; with the milliseconds spent loading it when this call loaded it (once per
    /// slot: the runtime and the session), so that a photo's segment time can be told from the load's.
    func mask() -> (mask: Result<DocumentMask, MaskUnavailable>, loadedMilliseconds: Double?) {
        var loaded: Double?
        if !tried {
            tried = true
            let started = Clock.monotonicNanoseconds
            do { made = try load() } catch { failure = error.reason }
            loaded = Clock.milliseconds(since: started)
        }
        if let made { return (.success(made), loaded) }
        return (.failure(MaskUnavailable(reason: failure ?? "no document mask")), loaded)
    }

    private func load() throws(MaskUnavailable) -> DocumentMask {
        let (models, path) = try Self.located(model, environment: environment)
        do throws(ONNXRuntimeError) { return try DocumentMask(models: models, modelPath: path) } catch {
            throw MaskUnavailable(reason: "\(path): \(error)")
        }
    }

    /// `detection` (the detector's, on `image`) with the mask's evidence weighed in, and what the mask said for the
    /// findings. A flat scan is not looked at; a mask that fails leaves the detector's answer and says why.
    func weigh(_ detection: DocumentDetection, image: Pix) throws(LeptonicaError) -> (DocumentDetection, JSON) {
        if let reason = Self.notForTheMask(detection, image: image) {
            return (detection, .object([("skipped", JSON(reason))]))
        }
        let mask: DocumentMask
        let (made, loaded) = self.mask()
        switch made {
        case .success(let made): mask = made
        case .failure(let unavailable): return (detection, .object([("unavailable", JSON(unavailable.reason))]))
        }
        let long = max(image.width, image.height)
        let factor = min(1, DocumentMask.largestPhoto / Double(long))
        let photo = try NeuralImage(factor < 1 ? try image.resampled(by: factor) : image)
        let sx = Double(photo.width) / Double(image.width), sy = Double(photo.height) / Double(image.height)
        do throws(ONNXRuntimeError) {
            var evidence = try mask.evidence(on: Quad(detection.corners.corners.map { Point($0.x * sx, $0.y * sy) }),
                                             photo: photo)
            evidence.outline = evidence.outline.map { Quad($0.corners.map { Point($0.x / sx, $0.y / sy) }) }
            let combined = DocumentMask.combined(detection, evidence)
            guard case .object(var fields) = evidence.json else { return (combined, evidence.json) }
            fields.insert(("chosen", JSON(DocumentMask.takesMask(detection, evidence) ? "mask" : "detector")), at: 0)
            fields.append(("detector", detection.corners.json))
            if let candidate = detection.candidate { fields.append(("detector_candidate", candidate.json)) }
            fields.append(("detector_confidence", .rounded(detection.confidence, places: 4)))
            if let loaded { fields.append(("loaded_ms", .rounded(loaded, places: 1))) }
            return (combined, .object(fields))
        } catch {
            return (detection, .object([("failed", JSON("\(error)"))]))
        }
    }
}

extension LazyDocumentMask {
    /// Why `image` is not shown to the mask, or nil when it is: a flat scan (the detector kept the frame, whose
    /// border is paper), or not a colour photo of the kind the mask knows (`DocumentMask.smallestPhoto`,
    /// `widestPhoto`).
    static func notForTheMask(_ detection: DocumentDetection, image: Pix) -> String? {
        if detection.isFullFrame, detection.flatness >= DocumentDetector.flatPageForBox {
            return "a flat scan: the border is paper"
        }
        let long = max(image.width, image.height), short = min(image.width, image.height)
        if image.depth != 32 { return "not a colour photo: \(image.depth) bits a pixel" }
        if long < DocumentMask.smallestPhoto || Double(long) > DocumentMask.widestPhoto * Double(short) {
            return "not a photo the mask knows: \(image.width)×\(image.height)"
        }
        return nil
    }
}

/// Why a page slot has no document mask.
struct MaskUnavailable: Error {
    let reason: String
}
