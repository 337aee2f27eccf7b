import FarmCore
import Leptonica
import Tesseract

/// orient: turns the page by 0, 90, 180 or 270 degrees so its text is upright. A page is never turned on weak or
/// conflicting evidence.
///
/// Three judges. For alphabets with ascenders and descenders (Latin, Cyrillic, Greek, Fraktur), the shapes of the
/// letters are cheap evidence: ascenders above the x-height are far commoner than descenders below it (Leptonica's
/// pixOrientDetect). When the page is expected in such an alphabet and they decisively say it is upright, that
/// ends it, at a tenth of OSD's cost; they can be decisively wrong (a reference list of capitals and digits read
/// as sideways), so they never turn a page alone. Otherwise Tesseract's orientation and script detection (OSD),
/// which knows every script but often mistakes upside-down for upright on short or noisy pages, is asked too. When
/// both agree, or OSD is sure (a higher bar for 180°) in a script the page's languages can have and the shapes do
/// not lean against it, that is the answer. Else a sample of the page is read in each candidate orientation
/// (OrientStage+Reading) and the surest reading wins. With no clear winner (small table crops: few words, small
/// print) a sample twice as wide, small print enlarged, is read every way up and the reading that clearly outweighs
/// the others wins; failing that too, the page stays as it is.
public struct OrientStage: PageStage {
    public let name = CorrectionStage.orient.rawValue
    /// OSD confidence needed to act on OSD alone (OCRmyPDF uses 14 and leaves some pages upside down; see docs).
    public static let defaultThreshold = 2.0
    /// OSD confidence needed to turn a page by 180° on OSD alone.
    static let upsideDownThreshold = 6.0
    /// Letter-shape evidence needed to decide: the strongest direction at least this large...
    static let decisiveEvidence = 8.0
    /// ...and this many times the other axis.
    static let decisiveRatio = 2.5
    /// Scripts whose letters have ascenders and descenders.
    static let letterShapeScripts: Set<String> = ["Latin", "Cyrillic", "Greek", "Fraktur"]
    /// OSD's script confidence below which its script guess is not used (the page's languages decide instead).
    static let scriptConfidenceNeeded = 1.0

    let detector: LazyOrientationDetector
    let threshold: Double

    init(detector: LazyOrientationDetector, threshold: Double) {
        self.detector = detector
        self.threshold = threshold
    }

    init(detector: OrientationDetector, threshold: Double) {
        self.init(detector: LazyOrientationDetector(detector), threshold: threshold)
    }

    public func run(_ image: Pix, _ context: inout PageContext) throws(PageFailure) -> Pix {
        do throws(LeptonicaError) {
            // A working copy: gray, at most 2500 px long, lighting flattened so that shadows are not ink.
            let long = Double(max(image.height, image.width))
            let factor = min(1, 2500 / long)
            let gray = try image.grayscale()
            let sample = try (factor < 1 ? gray.resampled(by: factor) : gray).backgroundNormalized()
            var findings: [(String, JSON)] = []
            var turns = 0
            var method = "none"
            // Letter shapes first when the page is expected in an alphabet: about a tenth of OSD's cost. Decisive
            // shapes that say the page is upright end it there; a turn needs a second judge, since shapes can be
            // decisively wrong (a reference list read as turned sideways, |left| = 10).
            let expectsAlphabet = !LanguagePlan(context.languages).isUnspaced
            let binary = try? sample.binarized(threshold: 160)
            let shapes = try? binary?.textOrientationEvidence()
            if let shapes {
                findings.append(("letter_shapes", .object([("up", .rounded(shapes.up)), ("left", .rounded(shapes.left))])))
            }
            let decisiveShapes = shapes.flatMap { Self.turns(up: $0.up, left: $0.left) }
            if expectsAlphabet, decisiveShapes == 0 {
                method = "letter-shapes"
            } else {
                let osd = try osdVerdict(sample, long: long * factor, factor: factor, context: context, findings: &findings)
                (turns, method) = try judged(sample, binary: binary, shapes: shapes, expectsAlphabet: expectsAlphabet, osd: osd,
                                             factor: factor, context: context, findings: &findings)
            }
            let rotation = turns * 90
            findings.insert(contentsOf: [("rotation", JSON(rotation)), ("method", JSON(method)), ("applied", JSON(turns != 0))], at: 0)
            context.record(name, .object(findings))
            guard turns != 0 else { return image }
            context.toPage = context.toPage.then(Self.quarterTurns(turns, width: image.width, height: image.height))
            return try image.rotatedOrthogonally(quarterTurns: turns)
        } catch {
            throw error.failure(name)
        }
    }

    /// What OSD said about the page, as the judges weigh it.
    struct OSDVerdict {
        /// OSD's quarter turns, sure or not; nil when OSD could not run.
        var turns: Int?
        /// Its confidence reached the bar for its turn (a higher one for 180°).
        var confident = false
        /// Confident, in a script the page's languages can have.
        var sure = false
        /// OSD knows the script, and it is one whose letter shapes apply.
        var shapesApply = false
    }

    /// OSD on the working copy, at most 1500 px long (`long`: the copy's longer side); its findings added.
    private func osdVerdict(_ sample: Pix, long: Double, factor: Double, context: PageContext,
                            findings: inout [(String, JSON)]) throws(LeptonicaError) -> OSDVerdict {
        // OSD reads ~1500 px plenty well, and much faster than a full scan.
        let osdFactor = min(1, 1500 / long)
        let osdInput = osdFactor < 1 ? try sample.resampled(by: osdFactor) : sample
        let resolution = context.resolution > 0 ? Int(Double(context.resolution) * factor * osdFactor) : nil
        var verdict = OSDVerdict()
        do throws(TesseractError) {
            guard let osdEngine = try detector.detector() else {
                throw TesseractError(.initialization, "the OSD model (osd.traineddata) is not installed")
            }
            let osd = try osdEngine.detect(osdInput, resolution: resolution)
            findings += [("osd_rotation", JSON(osd.rotation)), ("confidence", .rounded(osd.confidence)),
                         ("script", JSON(osd.script)), ("script_confidence", .rounded(osd.scriptConfidence))]
            let scriptKnown = osd.scriptConfidence >= Self.scriptConfidenceNeeded
            // A script the page's languages cannot have means OSD misread the page (an upright English
            // table called upside-down Greek): its turn is then only a candidate.
            let scriptPossible = !scriptKnown || Self.canHave(script: osd.script, languages: context.languages)
            if scriptKnown && Self.letterShapeScripts.contains(osd.script) { verdict.shapesApply = true }
            if !scriptPossible { findings.append(("script_impossible", true)) }
            // Turning a page upside down on OSD's word alone needs more: its 0°/180° judgement is its
            // weakest (wrong 180° calls seen at confidence 2.0–4.2 on upright pages, right ones at 8.5+).
            let needed = osd.rotation == 180 ? max(threshold, Self.upsideDownThreshold) : threshold
            verdict.turns = osd.rotation / 90
            if osd.confidence >= needed {
                verdict.confident = true
                verdict.sure = scriptPossible
            }
        } catch {
            findings.append(("osd_error", JSON(error.message)))
        }
        return verdict
    }

    /// The turn and method when the letter shapes alone do not settle it: the shapes and OSD agreeing, OSD sure
    /// and not contradicted, else the readings of a sample.
    private func judged(_ sample: Pix, binary: Pix?, shapes: (up: Double, left: Double)?, expectsAlphabet: Bool,
                        osd: OSDVerdict, factor: Double, context: PageContext,
                        findings: inout [(String, JSON)]) throws(LeptonicaError) -> (turns: Int, method: String) {
        let shapesApply = expectsAlphabet || osd.shapesApply
        let decisiveShapes = shapes.flatMap { Self.turns(up: $0.up, left: $0.left) }
        // Turns a judge proposes with some weight; read when the judges do not agree.
        var proposals: [Int] = []
        if osd.confident, let osdTurns = osd.turns { proposals.append(osdTurns) }
        let lean = shapesApply ? shapes.flatMap { Self.leaning(up: $0.up, left: $0.left) } : nil
        if shapesApply, let decisiveShapes, decisiveShapes == osd.turns {
            return (decisiveShapes, "letter-shapes")
        } else if osd.sure, let osdTurns = osd.turns, decisiveShapes == nil || !shapesApply, lean == nil || lean == osdTurns {
            // OSD sure, in a script the page can have, and the shapes not against it.
            return (osdTurns, "osd")
        }
        // The shapes' evidence names an axis more often than a direction (a table of figures has few
        // ascenders, and its rules and digits can tip the sign): a lean proposes both sides of its axis.
        if let lean { proposals += lean % 2 == 1 ? [1, 3] : [0, 2] }
        // OSD's turn is a candidate even when it is unsure.
        if let osdTurns = osd.turns { proposals.append(osdTurns) }
        // Weak or conflicting evidence: read a sample each way; no clear winner leaves the page.
        guard let binary, let engine = detector.sampleReader.engine(for: context.languages) else {
            findings.append(("reading_error", JSON("no engine for \(context.languages.joined(separator: "+"))")))
            return (0, "reading")
        }
        let readingResolution = context.resolution > 0 ? Int(Double(context.resolution) * factor) : nil
        let turns = try Self.readingTurns(sample, binary: binary, proposals: proposals, engine: engine,
                                          resolution: readingResolution, findings: &findings)
        return (turns, "reading")
    }

    /// The turn the readings of a sample decide: first the proposed turns; when they leave no clear answer (the
    /// judges can both be wrong: shapes have named the wrong axis), the rest, so that every orientation has been
    /// read; still none, a wider sample every way up, weighed.
    private static func readingTurns(_ sample: Pix, binary: Pix, proposals: [Int], engine: TesseractEngine, resolution: Int?,
                                     findings: inout [(String, JSON)]) throws(LeptonicaError) -> Int {
        let proposed = Set(proposals).subtracting([0]).sorted()
        let first = proposed.isEmpty ? [0, 1, 2, 3] : [0] + proposed
        var readings = try Self.readings(of: sample, binary: binary, candidates: first, engine: engine, resolution: resolution)
        var turns = decided(by: readings)
        let rest = [1, 2, 3].filter { !first.contains($0) }
        if turns == 0, !rest.isEmpty, !readings.isEmpty, !clearlyUpright(readings) {
            readings += try Self.readings(of: sample, binary: binary, candidates: rest, engine: engine, resolution: resolution)
            turns = decided(by: readings)
        }
        findings.append(("readings", .array(readings.map(\.json))))
        if turns == 0, !readings.isEmpty, !clearlyUpright(readings) {
            // Still no clear answer (a table crop: few words, small print, sparse cells): read a
            // wider sample, small print enlarged, every way up, and weigh what each way read.
            let wider = try Self.readings(of: sample, binary: binary, candidates: [0, 1, 2, 3], engine: engine,
                                          resolution: resolution, glyphs: widerSampleGlyphs, enlargedTo: readingGlyph)
            turns = decidedByWeight(wider)
            findings.append(("wider_readings", .array(wider.map(\.json))))
        }
        return turns
    }

    /// The clockwise quarter turns that make text upright, from letter-shape evidence; nil when it is not decisive.
    static func turns(up: Double, left: Double) -> Int? {
        if abs(up) >= decisiveEvidence && abs(up) >= decisiveRatio * abs(left) { return up > 0 ? 0 : 2 }
        if abs(left) >= decisiveEvidence && abs(left) >= decisiveRatio * abs(up) { return left > 0 ? 1 : 3 }
        return nil
    }

    /// The map of pixel coordinates for an image of `width` × `height` turned clockwise by `turns` × 90°.
    static func quarterTurns(_ turns: Int, width: Int, height: Int) -> Homography {
        let w = Double(width), h = Double(height)
        switch ((turns % 4) + 4) % 4 {
        case 1: return Homography([0, -1, h, 1, 0, 0, 0, 0, 1])    // (x, y) → (h − y, x)
        case 2: return Homography([-1, 0, w, 0, -1, h, 0, 0, 1])   // (x, y) → (w − x, h − y)
        case 3: return Homography([0, 1, 0, -1, 0, w, 0, 0, 1])    // (x, y) → (y, w − x)
        default: return .identity
        }
    }
}

/// Tesseract's OSD engine, created when a page first needs it and kept. Its model costs a page slot about 25 MB,
/// and pages in an alphabet are usually decided by their letter shapes without it, so a slot reading such pages
/// never pays for it. Not `Sendable`: one per page slot.
public final class LazyOrientationDetector {
    private var made: OrientationDetector?
    private var tried = false
    private var failure: TesseractError?
    /// The engine that reads samples when the judges disagree (made on the first such page).
    let sampleReader = SampleReader()

    /// A detector made on first use, when the OSD model is installed.
    public init() {}

    /// A detector that exists already.
    public init(_ detector: OrientationDetector) {
        made = detector
        tried = true
    }

    /// The engine (nil when the OSD model is not installed); an engine that failed to load fails every call.
    public func detector() throws(TesseractError) -> OrientationDetector? {
        if !tried {
            tried = true
            if TesseractEngine.hasOrientationData() {
                do throws(TesseractError) { made = try OrientationDetector() } catch { failure = error }
            }
        }
        if let failure { throw failure }
        return made
    }

    /// Whether the engine has been created (for tests and memory accounting).
    public var isLoaded: Bool { made != nil }
}
