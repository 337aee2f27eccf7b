import Testing
import FarmCore

@Suite("Geometry")
struct GeometryTests {
    @Test("a homography from four point pairs maps them, and its inverse maps them back")
    func homography() throws {
        let source = [Point(100, 120), Point(900, 80), Point(950, 700), Point(60, 650)]
        let destination = [Point(0, 0), Point(800, 0), Point(800, 600), Point(0, 600)]
        let h = try #require(Homography.mapping(from: source, to: destination))
        for (s, d) in zip(source, destination) {
            #expect(h.apply(s).distance(to: d) < 1e-6)
        }
        let inverse = try #require(h.inverse)
        for (s, d) in zip(source, destination) {
            #expect(inverse.apply(d).distance(to: s) < 1e-6)
        }
        let middle = h.apply(Point(500, 400))
        #expect(inverse.apply(middle).distance(to: Point(500, 400)) < 1e-6)
        #expect(Homography.mapping(from: [Point(0, 0), Point(1, 1), Point(2, 2), Point(3, 3)], to: destination) == nil)
    }

    @Test("composition applies the first transform, then the second")
    func composition() {
        let shift = Homography.translation(10, 0)
        let double = Homography.scale(2, 2)
        #expect(shift.then(double).apply(Point(1, 1)) == Point(22, 2))
        #expect(double.then(shift).apply(Point(1, 1)) == Point(12, 2))
        let quarter = Homography.rotation(.pi / 2)
        let p = quarter.apply(Point(1, 0))
        #expect(abs(p.x) < 1e-12 && abs(p.y - 1) < 1e-12, "clockwise on screen: +x turns to +y (down)")
    }

    @Test("quadrilateral area and intersection over union")
    func iou() {
        let a = Quad(width: 10, height: 10)
        #expect(a.area == 100)
        #expect(a.iou(with: a) == 1)
        let shifted = Quad(a.corners.map { $0 + Point(5, 0) })
        #expect(abs(a.iou(with: shifted) - 50.0 / 150.0) < 1e-9)
        let far = Quad(a.corners.map { $0 + Point(50, 50) })
        #expect(a.iou(with: far) == 0)
        #expect(a.isConvex)
        #expect(!Quad([Point(0, 0), Point(10, 10), Point(10, 0), Point(0, 10)]).isConvex)
    }
}
