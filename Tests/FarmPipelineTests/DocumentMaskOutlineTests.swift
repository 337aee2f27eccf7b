import Foundation
import Testing
import FarmCore
import FarmRuntime
@testable import FarmPipeline
import Leptonica
import TestSupport

/// The mask's outline (issue 39): `DocumentMask.outline`, the port of Training/mask/outline.py's `quad_from_mask`,
/// against outline.py itself on the same grids of real frames, and its pieces on drawn grids. The real-frame test
/// needs the neural engine's ONNX Runtime (Scripts/install-neural) and the training venv (Training/mask/setup); a
/// missing one fails.
@Suite("Document mask: its outline, as outline.py draws it")
struct DocumentMaskOutlineTests {
    /// Three frames (the edge fit moving corners least and most, and a desk the mask never saw): each costs about
    /// 10 s in a debug build and 45 s under the leak check's sanitizers (the Pillow-style resizes), and 02_01,
    /// 26_05 and letter001 agreed to 0.000 px as well when measured (stop 43).
    static let frames = ["midv500/midv500_14_04.jpg", "midv500/midv500_31_07.jpg",
                         "smartdoc15/background01_magazine001_frame_0107.jpeg"]

    /// A frame, its mask from the committed model in ocrfarm's ONNX Runtime, and Swift's outlines of it.
    struct Outlined {
        let name: String
        let width: Int
        let height: Int
        let grid: DocumentMask.Grid
        let plain: [Point]?
        let edges: [Point]?
    }

    /// What outline.py's `quad_from_mask` makes of each frame's grid (Swift's, passed as JSON), without and with
    /// the photo: by frame, "plain" and "edges", each four corners or null; and "pairs", with the photo but with
    /// every pair of places tried in `robust_line` (the port's deterministic sampling) instead of 60 random ones.
    static func reference(_ outlined: [Outlined]) throws -> JSON {
        let training = Fixtures.packageRoot + "/Training/mask"
        let setup = try Run.process(training + "/setup", ["--check"])
        try #require(setup.status == 0, "the training venv is missing: Training/mask/setup makes it (Scripts/test runs it)")
        let python = setup.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let script = """
            import json, sys
            import numpy as np
            from PIL import Image
            sys.path.insert(0, sys.argv[1])
            import outline
            random_pairs = outline.robust_line
            def every_pair(along, across, usable):
                idx = np.nonzero(usable)[0]
                if len(idx) < 2:
                    return None
                best = idx[:0]
                for n, i in enumerate(idx):
                    for j in idx[n + 1:]:
                        q = (across[j] - across[i]) / (along[j] - along[i])
                        p = across[i] - q * along[i]
                        near = idx[np.abs(across[idx] - (p + q * along[idx])) / np.hypot(1, q) <= outline.EDGE_TOLERANCE]
                        if len(near) > len(best):
                            best = near
                if len(best) < outline.EDGE_INLIERS * len(along):
                    return None
                return np.linalg.lstsq(np.stack([np.ones(len(best)), along[best]], 1), across[best], rcond=None)[0]
            result = {}
            for frame in json.load(sys.stdin):
                size = frame["size"]
                prob = np.array(frame["grid"], np.float32).reshape(size, size)
                image = Image.open(frame["path"]).convert("RGB")
                assert image.size == (frame["width"], frame["height"]), image.size
                quads = [outline.quad_from_mask(prob, image.width, image.height, photo) for photo in (None, image)]
                outline.robust_line = every_pair
                quads.append(outline.quad_from_mask(prob, image.width, image.height, image))
                outline.robust_line = random_pairs
                result[frame["name"]] = {key: None if quad is None else np.asarray(quad, float).tolist()
                                         for key, quad in zip(("plain", "edges", "pairs"), quads)}
            print(json.dumps(result))
            """
        let frames = outlined.map { frame in
            "{\"name\": \"\(frame.name)\", \"path\": \"\(Fixtures.path(frame.name))\", \"width\": \(frame.width), "
                + "\"height\": \(frame.height), \"size\": \(frame.grid.size), "
                + "\"grid\": [\(frame.grid.values.map { "\(Double($0))" }.joined(separator: ","))]}"
        }
        let output = try Run.process(python, ["-c", script, training],
                                     stdin: Data(("[" + frames.joined(separator: ",") + "]").utf8))
        try #require(output.status == 0, "outline.py: \(output.stderr)")
        return try JSON.parse(output.text)
    }

    static func corners(_ json: JSON?) -> [Point]? {
        guard let pairs = json?.arrayValue, pairs.count == 4 else { return nil }
        let points = pairs.compactMap { pair -> Point? in
            guard let x = pair[0]?.doubleValue, let y = pair[1]?.doubleValue else { return nil }
            return Point(x, y)
        }
        return points.count == 4 ? points : nil
    }

    /// IoU and the largest distance between corresponding corners (px), or nil when either has no outline.
    static func agreement(_ ours: [Point]?, _ theirs: [Point]?) -> (iou: Double, corner: Double)? {
        guard let ours, let theirs else { return nil }
        let corner = zip(ours, theirs).map { $0.distance(to: $1) }.max() ?? .infinity
        return (Quad(ours).iou(with: Quad(theirs)), corner)
    }

    @Test("on real frames' masks (committed model), the outline with and without the edge fit is outline.py's: IoU ≥ 0.99; with outline.py's pair search made the port's, within 0.01 px",
          .timeLimit(.minutes(5)))
    func asOutlinePy() throws {
        let mask = try DocumentMask(models: try NeuralModels.locate(), modelPath: DocumentMaskTests.modelPath)
        let started = Date()
        let outlined = try Self.frames.map { name in
            let photo = try NeuralImage(try Pix(contentsOfFile: Fixtures.path(name)))
            let grid = try mask.grid(of: photo)
            return Outlined(name: name, width: photo.width, height: photo.height, grid: grid,
                            plain: DocumentMask.outline(of: grid, width: photo.width, height: photo.height),
                            edges: DocumentMask.outline(of: grid, width: photo.width, height: photo.height, photo: photo))
        }
        print("ocrfarm on \(outlined.count) frames: \(Format.fixed(Date().timeIntervalSince(started), 1)) s")
        let pythonStarted = Date()
        let reference = try Self.reference(outlined)
        // The edge fit is no copy of the plain outline: on these frames it moves corners by 14–91 px.
        #expect(outlined.contains { (Self.agreement($0.plain, $0.edges)?.corner ?? 0) > 5 })
        print("outline.py on \(outlined.count) frames: \(Format.fixed(Date().timeIntervalSince(pythonStarted), 1)) s")
        for frame in outlined {
            // The edge fit moved the outline on this frame by this much (px, largest corner).
            let moved = Self.agreement(frame.plain, frame.edges)?.corner ?? 0
            print("outline \(frame.name): the edge fit moved a corner by up to \(Format.fixed(moved, 1)) px")
            for (key, ours) in [("plain", frame.plain), ("edges", frame.edges)] {
                let theirs = Self.corners(reference[frame.name]?[key])
                #expect(ours != nil && theirs != nil, "\(frame.name) \(key): ours \(String(describing: ours)), outline.py's \(String(describing: theirs))")
                guard let measured = Self.agreement(ours, theirs) else { continue }
                print("outline \(frame.name) \(key): IoU \(Format.fixed(measured.iou, 5)), largest corner distance \(Format.fixed(measured.corner, 3)) px")
                #expect(measured.iou >= 0.99, "\(frame.name) \(key): IoU \(measured.iou), ours \(ours!), outline.py's \(theirs!)")
            }
            // With the same pair search, the edge fit is outline.py's to a hundredth of a pixel.
            let pairs = Self.agreement(frame.edges, Self.corners(reference[frame.name]?["pairs"]))
            print("outline \(frame.name) edges, outline.py trying every pair: largest corner distance \(Format.fixed(pairs?.corner ?? .infinity, 3)) px")
            #expect((pairs?.corner ?? .infinity) < 0.01, "\(frame.name): \(String(describing: frame.edges))")
        }
    }

    /// A card of 88 × 60 cells about (64, 62), turned 11°, its corners rounded to `radius` cells, its edge soft (a
    /// ramp two cells wide, as the model's): the region's hull has over 64 vertices.
    static func roundedCard(radius: Double) -> DocumentMask.Grid {
        let size = DocumentMask.inputSize, angle = 11 * Double.pi / 180
        var values = [Float](repeating: 0, count: size * size)
        for y in 0..<size {
            for x in 0..<size {
                let px = Double(x) + 0.5 - 64, py = Double(y) + 0.5 - 62
                let u = px * cos(angle) + py * sin(angle), v = -px * sin(angle) + py * cos(angle)
                let dx = max(abs(u) - (44 - radius), 0), dy = max(abs(v) - (30 - radius), 0)
                values[y * size + x] = Float(min(1, max(0, 0.5 + (radius - (dx * dx + dy * dy).squareRoot()) / 2)))
            }
        }
        return DocumentMask.Grid(size: size, values: values)
    }

    /// outline.py's outline of `grid` (for a 1024 × 1024 photo) with its hull's vertex list begun at each vertex in
    /// turn (qhull's first vertex is arbitrary), and begun at the smallest (x, y), as the port begins it.
    static func referenceFromEachStart(_ grid: DocumentMask.Grid) throws -> (starts: [[Point]], smallest: [Point]?) {
        let training = Fixtures.packageRoot + "/Training/mask"
        let setup = try Run.process(training + "/setup", ["--check"])
        try #require(setup.status == 0, "the training venv is missing: Training/mask/setup makes it (Scripts/test runs it)")
        let script = """
            import json, sys
            import numpy as np
            from scipy import ndimage
            from scipy.spatial import ConvexHull
            sys.path.insert(0, sys.argv[1])
            import outline
            prob = np.array(json.load(sys.stdin), np.float32).reshape(128, 128)
            region = outline.largest_region(prob)
            ys, xs = np.nonzero(region)
            pts = np.stack([xs, ys], 1).astype(np.float64) + 0.5
            hull = ConvexHull(pts).vertices
            edge = region & ~ndimage.binary_erosion(region)
            ys, xs = np.nonzero(edge)
            boundary = np.stack([xs, ys], 1).astype(np.float64) + 0.5
            def quad(start):
                q = outline.refined(outline.max_area_quad(pts[np.roll(hull, -start)]), boundary)
                q = outline.grown(region, outline.ordered(q))
                return outline.ordered(q * (1024 / region.shape[0])).tolist()
            smallest = min(range(len(hull)), key=lambda i: (pts[hull[i], 0], pts[hull[i], 1]))
            print(json.dumps({"starts": [quad(k) for k in range(len(hull))], "smallest": quad(smallest)}))
            """
        let output = try Run.process(setup.text.trimmingCharacters(in: .whitespacesAndNewlines), ["-c", script, training],
                                     stdin: Data(("[" + grid.values.map { "\(Double($0))" }.joined(separator: ",") + "]").utf8))
        try #require(output.status == 0, "outline.py: \(output.stderr)")
        let json = try JSON.parse(output.text)
        return ((json["starts"]?.arrayValue ?? []).compactMap { Self.corners($0) }, Self.corners(json["smallest"]))
    }

    @Test("over 64 hull vertices (rounded cards), the outline is outline.py's with the hull begun at its smallest (x, y), one of those outline.py gives as qhull's first vertex varies",
          arguments: [20.0, 30.0])
    func subsampledHull(radius: Double) throws {
        let grid = Self.roundedCard(radius: radius)
        let side = grid.size * DocumentMask.upsampling
        let region = try #require(MaskRegion.largest(in: MaskRegion.upsampled(grid, to: side), side: side, threshold: 0.5))
        #expect(region.hull().count > DocumentMask.hullVertices)
        let ours = try #require(DocumentMask.outline(of: grid, width: 1024, height: 1024))
        let reference = try Self.referenceFromEachStart(grid)
        let same = try #require(Self.agreement(ours, reference.smallest))
        let spread = reference.starts.compactMap { Self.agreement(reference.smallest, $0)?.corner }.max() ?? 0
        let nearest = reference.starts.compactMap { Self.agreement(ours, $0)?.corner }.min() ?? .infinity
        print("outline rounded card \(Int(radius)) (hull \(region.hull().count) vertices): against outline.py begun where the port begins, IoU \(Format.fixed(same.iou, 5)), largest corner distance \(Format.fixed(same.corner, 3)) px; outline.py's own outlines over its \(reference.starts.count) possible first vertices differ by up to \(Format.fixed(spread, 1)) px")
        #expect(same.iou >= 0.99 && same.corner < 0.01, "ours \(ours), outline.py's \(String(describing: reference.smallest))")
        #expect(nearest < 0.01)
    }

    // MARK: Drawn grids

    /// A 128-cell grid: 1 where `inside` holds at the cell's centre, else 0.
    static func drawn(_ inside: (Point) -> Bool) -> DocumentMask.Grid {
        let size = DocumentMask.inputSize
        var values = [Float](repeating: 0, count: size * size)
        for y in 0..<size {
            for x in 0..<size where inside(Point(Double(x) + 0.5, Double(y) + 0.5)) { values[y * size + x] = 1 }
        }
        return DocumentMask.Grid(size: size, values: values)
    }

    /// A rectangle of `width` × `height` cells about `centre`, turned by `degrees`: its corners tl, tr, br, bl.
    static func rectangle(centre: Point, width: Double, height: Double, degrees: Double) -> [Point] {
        let angle = degrees * .pi / 180, c = cos(angle), s = sin(angle)
        return [(-1.0, -1.0), (1, -1), (1, 1), (-1, 1)].map { (u, v) in
            let x = u * width / 2, y = v * height / 2
            return Point(centre.x + x * c - y * s, centre.y + x * s + y * c)
        }
    }

    @Test("a turned rectangle's drawn mask gives its corners, tl tr br bl, each within a cell", arguments: [7.0, 20.0, -12.0])
    func turnedRectangle(degrees: Double) throws {
        let corners = Self.rectangle(centre: Point(62, 67), width: 70, height: 50, degrees: degrees)
        let grid = Self.drawn { DocumentMaskTests.convex(corners, contains: $0) }
        // A photo of 1024 × 1024: a cell is 8 px.
        let found = try #require(DocumentMask.outline(of: grid, width: 1024, height: 1024))
        let truth = DocumentDetector.ordered(corners.map { $0 * 8 })
        for (ours, expected) in zip(found, truth) {
            #expect(ours.distance(to: expected) <= 8, "\(degrees)°: \(found) against \(truth)")
        }
    }

    /// The share of the convex quadrilateral `page` (cells) that `outline` (photo pixels, `scale` to a cell) covers,
    /// counted at a quarter of a cell.
    static func kept(_ page: [Point], by outline: [Point], scale: Double) -> Double {
        var inPage = 0, kept = 0
        for y in 0..<(128 * 4) {
            for x in 0..<(128 * 4) {
                let p = Point((Double(x) + 0.5) / 4, (Double(y) + 0.5) / 4)
                guard DocumentMaskTests.convex(page, contains: p) else { continue }
                inPage += 1
                if DocumentMaskTests.convex(outline, contains: p * scale) { kept += 1 }
            }
        }
        return Double(kept) / Double(max(1, inPage))
    }

    @Test("where the mask cuts a corner off a page, the outline grown to its region takes the corner back (the hull's largest quadrilateral leaves out over 10% of the page, the grown one under 5%) and is never smaller than it")
    func grownCorner() throws {
        let page = DocumentDetector.ordered(Self.rectangle(centre: Point(63, 65), width: 92, height: 68, degrees: 6))
        // The mask misses a triangle off the top right: from 70% along the top to 30% down the right side.
        let cut = [page[0] + (page[1] - page[0]) * 0.7, page[1], page[1] + (page[2] - page[1]) * 0.3]
        let grid = Self.drawn { p in
            DocumentMaskTests.convex(page, contains: p) && !DocumentMaskTests.convex(cut, contains: p)
        }
        let side = grid.size * DocumentMask.upsampling
        let region = try #require(MaskRegion.largest(in: MaskRegion.upsampled(grid, to: side), side: side, threshold: 0.5))
        let hullQuad = try #require(DocumentMask.maxAreaQuad(region.hull()))
        let before = DocumentDetector.ordered(DocumentMask.refined(hullQuad, boundary: region.boundary()))
        let after = try #require(DocumentMask.outline(of: grid, width: side, height: side))
        let keptBefore = Self.kept(page, by: before, scale: 4), keptAfter = Self.kept(page, by: after, scale: 4)
        print("grown corner: the page kept \(Format.fixed(keptBefore, 4)) before growing, \(Format.fixed(keptAfter, 4)) after")
        #expect(keptBefore < 0.9 && keptAfter > 0.95, "before \(before), after \(after)")
        #expect(Quad(after).area >= Quad(before).area)
        #expect(Quad(after).isConvex)
        // A whole rectangle's outline does not grow past it.
        let whole = Self.drawn { DocumentMaskTests.convex(page, contains: $0) }
        let outline = try #require(DocumentMask.outline(of: whole, width: side, height: side))
        #expect(Self.kept(page, by: outline, scale: 4) > 0.99)
        #expect(Quad(outline).area < 1.02 * 92 * 68 * 16, "\(outline)")
    }

    @Test("an empty grid, or one with a region below 16 upsampled pixels, has no outline")
    func empty() {
        let size = DocumentMask.inputSize
        #expect(DocumentMask.outline(of: DocumentMask.Grid(size: size, values: [Float](repeating: 0, count: size * size)),
                                     width: 640, height: 480) == nil)
        #expect(DocumentMask.outline(of: DocumentMask.Grid(size: size, values: [Float](repeating: 0.49, count: size * size)),
                                     width: 640, height: 480) == nil)
        var dot = [Float](repeating: 0, count: size * size)
        dot[40 * size + 40] = 0.6  // upsampled, only the centre's few pixels exceed 0.5
        #expect(DocumentMask.outline(of: DocumentMask.Grid(size: size, values: dot), width: 640, height: 480) == nil)
    }

    @Test("a thin line across the region (a crease: one cell at 0.6) does not cut it, and a smaller blob beside it does not move the outline")
    func thinLineAndBlob() throws {
        let corners = Self.rectangle(centre: Point(60, 64), width: 80, height: 56, degrees: 9)
        let plain = Self.drawn { DocumentMaskTests.convex(corners, contains: $0) }
        let expected = try #require(DocumentMask.outline(of: plain, width: 1280, height: 1280))
        let size = plain.size
        var values = plain.values
        for y in 0..<size {
            for x in 0..<size where values[y * size + x] > 0 && abs(Double(x) - Double(y) + 10) < 0.75 { values[y * size + x] = 0.6 }
        }
        #expect(values.filter { $0 == 0.6 }.count >= 40)
        // A second, smaller document-like blob in the corner: the largest region is the one outlined.
        for y in 2..<14 { for x in 108..<124 { values[y * size + x] = 1 } }
        let found = try #require(DocumentMask.outline(of: DocumentMask.Grid(size: size, values: values), width: 1280, height: 1280))
        for (a, b) in zip(found, expected) { #expect(a.distance(to: b) < 1, "\(found) against \(expected)") }
        // A line of cells at 0 does cut the region, and then only its larger part is outlined.
        for y in 0..<size { for x in 0..<size where abs(Double(x) - Double(y) + 10) < 0.75 { values[y * size + x] = 0 } }
        let cut = try #require(DocumentMask.outline(of: DocumentMask.Grid(size: size, values: values), width: 1280, height: 1280))
        #expect(Quad(cut).area < 0.9 * Quad(expected).area)
    }

    @Test("the edge fit moves each side of an outline 10 px off onto a drawn card's edges (within 1.5 px); on a flat photo the outline stays")
    func edgeFit() throws {
        let width = 1200, height = 900
        let card = Self.rectangle(centre: Point(610, 440), width: 700, height: 460, degrees: 8)
        var pixels = [UInt8](repeating: 70, count: width * height)
        for y in 0..<height {
            for x in 0..<width where DocumentMaskTests.convex(card, contains: Point(Double(x) + 0.5, Double(y) + 0.5)) {
                pixels[y * width + x] = 220
            }
        }
        let photo = NeuralImage(width: width, height: height, planes: [pixels])
        let truth = DocumentDetector.ordered(card)
        let centre = truth.reduce(Point(0, 0), +) * 0.25
        // Each corner 10 px further out along its diagonal: every side off by about 7 px, under the reach
        // (3 cells of a 128-cell grid at 1024 px: 24 px).
        let loose = truth.map { corner -> Point in
            let d = corner - centre
            return corner + d * (10 / (d.x * d.x + d.y * d.y).squareRoot())
        }
        let fitted = DocumentMask.fittedToEdges(loose, photo: photo)
        for (found, expected) in zip(fitted, truth) {
            #expect(found.distance(to: expected) <= 1.5, "\(fitted) against \(truth)")
        }
        let flat = NeuralImage(width: width, height: height, planes: [[UInt8](repeating: 128, count: width * height)])
        #expect(DocumentMask.fittedToEdges(loose, photo: flat) == loose)
    }

    @Test("the hull of a region is convex, counter-clockwise in x and y, without collinear vertices; the largest quadrilateral on a regular octagon's hull has half its corners")
    func hullAndQuad() throws {
        let octagon = (0..<8).map { k in Point(64 + 40 * cos(Double(k) * .pi / 4), 64 + 40 * sin(Double(k) * .pi / 4)) }
        let grid = Self.drawn { DocumentMaskTests.convex(octagon, contains: $0) }
        let side = grid.size * DocumentMask.upsampling
        let region = try #require(MaskRegion.largest(in: MaskRegion.upsampled(grid, to: side), side: side, threshold: 0.5))
        let hull = region.hull()
        #expect(hull.count >= 8)
        for i in hull.indices {
            let a = hull[i], b = hull[(i + 1) % hull.count], c = hull[(i + 2) % hull.count]
            #expect((b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x) > 0)
        }
        let quad = try #require(DocumentMask.maxAreaQuad(octagon))
        #expect(abs(Quad(quad).area - 2 * 40 * 40) < 1e-6, "\(quad)")
        #expect(DocumentMask.maxAreaQuad(Array(octagon.prefix(3))) == nil)
    }
}
