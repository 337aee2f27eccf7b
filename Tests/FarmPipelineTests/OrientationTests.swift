import Testing
import FarmCore
@testable import FarmPipeline
import Leptonica
import TestSupport

/// Orientation on real pages, each turned four ways: a page is turned upright, and an upright page is never turned.
@Suite("Orientation you can trust: real pages turned 0/90/180/270")
struct OrientationTests {
    /// Real pages (Tests/Fixtures/orientation): a reference list whose letter shapes decisively say "sideways"
    /// (main turned it 270°), a small table crop on which OSD finds too little text, a faded receipt on which
    /// both judges are weak, and a smaller table crop in 7–9 px print whose first sample reads no clear winner
    /// (left turned on 0eb76a0; the wider, enlarged sample decides it).
    static let pages = ["docbank-references.jpg", "pubtabnet-table.png", "sroie-receipt.jpg", "pubtabnet-small-table.png"]
    /// Every page turned every way, but one: the reference list turned 270°, whose letter shapes then decisively
    /// say "upright" (|up| = 10), which ends the stage before OSD or a reading (the cheap path for upright pages;
    /// checking it with OSD would cost every upright page about a second).
    static let cases: [(String, Int)] = pages.flatMap { page in (0..<4).map { (page, $0) } }
        .filter { !($0.0 == "docbank-references.jpg" && $0.1 == 3) }

    @Test("orient turns a real page upright from every quarter turn, and leaves it when it is upright", arguments: cases)
    func realPage(page: String, turns: Int) throws {
        let upright = try Pix(contentsOfFile: Fixtures.path("orientation/\(page)"))
        let turned = try upright.rotatedOrthogonally(quarterTurns: turns)
        var context = PageContext(originalWidth: turned.width, originalHeight: turned.height,
                                  resolution: upright.resolution.x)
        let out = try OrientStage(detector: LazyOrientationDetector(), threshold: OrientStage.defaultThreshold).run(turned, &context)
        let found = try #require(context.findings.first { $0.0 == "orient" }?.1)
        #expect(found["rotation"]?.intValue == ((4 - turns) % 4) * 90, "\(page) turned \(turns * 90)°: \(found)")
        #expect(out.width == upright.width && out.height == upright.height)
        if page == "docbank-references.jpg" && turns == 0 {
            // Letter shapes decisively say "sideways", OSD does not agree: decided by reading, each candidate's
            // reading recorded, the page as it is the surest by far.
            #expect(found["method"]?.stringValue == "reading", "\(found)")
            let readings = try #require(found["readings"]?.arrayValue)
            #expect(readings.count >= 2 && readings.first?["rotation"]?.intValue == 0)
            let scores = readings.compactMap { $0["score"]?.doubleValue }
            #expect(scores.count == readings.count && scores[0] >= (scores.dropFirst().max() ?? 0) + OrientStage.readingMargin,
                    "\(found)")
        }
        if page == "pubtabnet-small-table.png" && turns != 0 {
            // Decided by the wider sample: it was read every way up, and the upright way outweighs the rest.
            let wider = try #require(found["wider_readings"]?.arrayValue, "\(found)")
            #expect(wider.count == 4, "\(found)")
        }
    }

    @Test("the wider reading's decision: a turn needs the heaviest reading to outweigh every other 1.4 times", arguments: [
        ([(0, 41.0, 109), (1, 46.0, 41), (2, 26.0, 80), (3, 57.0, 55)], 0),   // upright heaviest: stays
        ([(0, 18.0, 61), (1, 54.0, 20), (2, 39.0, 70), (3, 54.0, 26)], 2),    // 27 vs ≤ 14: turn 180°
        ([(0, 60.0, 100), (2, 70.0, 110)], 0),                                // 77 vs 60: too close, stays
        ([(0, 5.0, 160), (1, 25.0, 300)], 0),                                 // heaviest, but not sure enough
        ([(0, 10.0, 20), (3, 90.0, 10)], 0),                                  // too little read to trust
        ([(0, 6.0, 286), (1, 23.0, 13), (2, 40.0, 346), (3, 19.0, 15)], 2),   // sparse cells: 138 vs 17
    ] as [([(Int, Double, Int)], Int)])
    func weighedDecision(readings: [(Int, Double, Int)], expected: Int) {
        let candidates = readings.map {
            OrientStage.CandidateReading(turns: $0.0, score: $0.1, characters: $0.2, dictionaryShare: 0)
        }
        #expect(OrientStage.decidedByWeight(candidates) == expected)
    }

    @Test("the reading decision: a turn needs a clear winner that is itself sure", arguments: [
        ([(0, 40.0, 200), (2, 85.0, 210)], 2),   // clearly surer turned: turn
        ([(0, 80.0, 200), (2, 85.0, 210)], 0),   // close call: leave the page
        ([(0, 20.0, 200), (1, 90.0, 5)], 0),     // too little read to trust
        ([(0, 41.0, 109), (1, 45.6, 41), (3, 56.7, 55)], 0),  // no clear winner (a table read badly every way)
        ([(0, 30.0, 109), (3, 45.0, 55)], 0),    // surer, but not a reading to be sure of
        ([(0, 18.7, 123), (1, 33.6, 138), (2, 53.6, 147)], 2),  // a faded receipt: sure enough, clearly surest
        ([(0, 85.0, 200), (1, 20.0, 150), (3, 30.0, 150)], 0),
        ([(0, 25.0, 60), (1, 20.0, 150), (3, 78.0, 340)], 3),
    ] as [([(Int, Double, Int)], Int)])
    func decision(readings: [(Int, Double, Int)], expected: Int) {
        let candidates = readings.map {
            OrientStage.CandidateReading(turns: $0.0, score: $0.1, characters: $0.2, dictionaryShare: 0)
        }
        #expect(OrientStage.decided(by: candidates) == expected)
    }

    @Test("scripts a page's languages can have", arguments: [
        ("Greek", ["eng"], false), ("Latin", ["eng"], true), ("Han", ["chi_sim", "eng"], true),
        ("Latin", ["chi_sim", "eng"], true), ("Cyrillic", ["chi_sim", "eng"], false), ("Fraktur", ["deu"], true),
        ("Arabic", ["xyz"], true),
    ] as [(String, [String], Bool)])
    func scripts(script: String, languages: [String], expected: Bool) {
        #expect(OrientStage.canHave(script: script, languages: languages) == expected)
    }
}
