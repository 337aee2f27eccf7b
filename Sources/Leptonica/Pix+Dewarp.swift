import CLeptonica

/// A page's dewarping model built from its text lines (Leptonica's dewarp: a quadratic fitted along each long
/// text line gives the vertical disparity, the line ends the horizontal one).
///
/// Owns one `L_DEWARPA` holding the page's one `L_DEWARP` (the array owns the model once it is inserted), both
/// released by `dewarpaDestroy` in `deinit`. Not `Sendable`: confined to the page slot that built it.
public final class DewarpModel {
    private let array: UnsafeMutablePointer<L_DEWARPA>
    /// The reduction of the image the model was built on (1 or 2): figures in model pixels × this = page pixels.
    public let reduction: Int
    /// Long text lines the vertical disparity was fitted to.
    public let lines: Int
    /// Smallest and largest curvature of those lines, and of the left and right text edges, in Leptonica's
    /// micro-units (10⁶ × the quadratic coefficient, in model pixels).
    public let minimumCurvature: Int
    public let maximumCurvature: Int
    public let leftEdgeCurvature: Int
    public let rightEdgeCurvature: Int
    /// Whether the horizontal disparity (from the line ends) was built too.
    public let hasHorizontalDisparity: Bool
    /// The spread of the vertical disparity over the page (largest − smallest shift), in page pixels.
    public let verticalDisparityRange: Double
    /// How far the text lines bend: the largest spread, across one row between the first and the last long line,
    /// of the vertical disparity less its straight-line fit, in page pixels. Tilt is not bending: a skewed or
    /// keystoned flat page measures near zero.
    public let bend: Double
    /// The median distance between neighbouring long lines, in page pixels (0 with fewer than two lines).
    public let linePitch: Double
    /// The width of the image the model was built on, in page pixels.
    public let width: Int

    fileprivate init(array: UnsafeMutablePointer<L_DEWARPA>, model: UnsafeMutablePointer<L_DEWARP>, reduction: Int) {
        self.array = array
        self.reduction = reduction
        let dew = model.pointee
        lines = Int(dew.nlines)
        minimumCurvature = Int(dew.mincurv)
        maximumCurvature = Int(dew.maxcurv)
        leftEdgeCurvature = Int(dew.leftcurv)
        rightEdgeCurvature = Int(dew.rightcurv)
        hasHorizontalDisparity = dew.hsuccess != 0
        width = Int(dew.w) * reduction
        var low: Float = 0, high: Float = 0
        if let sampled = dew.sampvdispar {
            fpixGetMin(sampled, &low, nil, nil)
            fpixGetMax(sampled, &high, nil, nil)
        }
        verticalDisparityRange = Double(high - low) * Double(reduction)
        var middles: [Double] = []
        if let sorted = dew.namidys {
            for index in 0..<numaGetCount(sorted) {
                var value: Float = 0
                numaGetFValue(sorted, index, &value)
                middles.append(Double(value))
            }
        }
        let gaps = zip(middles.dropFirst(), middles).map { $0 - $1 }.sorted()
        linePitch = gaps.isEmpty ? 0 : gaps[gaps.count / 2] * Double(reduction)
        bend = Self.bend(of: dew, between: middles.first ?? 0, and: middles.last ?? 0) * Double(reduction)
    }

    /// The largest bend of the vertical disparity across a row, over the rows between the first and the last long
    /// line: each row's samples less their straight-line fit (a tilt shifts a row linearly and is not a bend),
    /// the spread of what is left. In model pixels.
    private static func bend(of dew: L_DEWARP, between top: Double, and bottom: Double) -> Double {
        guard let sampled = dew.sampvdispar else { return 0 }
        var columns: Int32 = 0, rows: Int32 = 0
        fpixGetDimensions(sampled, &columns, &rows)
        let step = Double(max(dew.sampling, 1))
        guard columns >= 3 else { return 0 }
        var largest = 0.0
        for row in 0..<rows where Double(row) * step >= top - step && Double(row) * step <= bottom + step {
            var xs: [Double] = [], values: [Double] = []
            for column in 0..<columns {
                var value: Float = 0
                fpixGetPixel(sampled, column, row, &value)
                xs.append(Double(column))
                values.append(Double(value))
            }
            let n = Double(xs.count)
            let meanX = xs.reduce(0, +) / n, meanValue = values.reduce(0, +) / n
            var covariance = 0.0, variance = 0.0
            for (x, value) in zip(xs, values) {
                covariance += (x - meanX) * (value - meanValue)
                variance += (x - meanX) * (x - meanX)
            }
            let slope = variance > 0 ? covariance / variance : 0
            let residuals = zip(xs, values).map { x, value in value - meanValue - slope * (x - meanX) }
            largest = max(largest, (residuals.max() ?? 0) - (residuals.min() ?? 0))
        }
        return largest
    }

    deinit {
        var reference: UnsafeMutablePointer<L_DEWARPA>? = array
        dewarpaDestroy(&reference)
    }

    /// How far the most curved line bends over the page's width (its sagitta: the quadratic's rise from the
    /// middle to either edge), in page pixels. Tilt is not bending, so a skewed flat page measures near zero.
    public var lineBend: Double {
        let curvature = Double(max(abs(minimumCurvature), abs(maximumCurvature))) / 1_000_000
        let halfWidth = Double(width) / Double(reduction) / 2
        return curvature * halfWidth * halfWidth * Double(reduction)
    }

    /// `image` with the disparity applied (any depth; pixels brought in from outside are white). `image` must be
    /// the page the model was built from, at full size.
    public func applied(to image: Pix) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        var result: UnsafeMutablePointer<PIX>?
        let rc = dewarpaApplyDisparity(array, 0, image.pointer, 255, 0, 0, &result, nil)
        guard rc == 0, let result else {
            if let result {
                var reference: UnsafeMutablePointer<PIX>? = result
                pixDestroy(&reference)
            }
            throw LeptonicaError.captured("dewarpaApplyDisparity", fallback: "the model could not be applied")
        }
        return Pix(owning: result)
    }
}

extension Pix {
    /// The dewarping model of this 1-bpp page, or why none could be built (too few long text lines, lines that
    /// cover too little of the page): `.failure` carries Leptonica's reason. `reduction` 2 builds the model on a
    /// half-size copy (four times faster; the disparity is scaled back up when applied).
    public func dewarpModel(reduction: Int = 1) throws(LeptonicaError) -> Result<DewarpModel, LeptonicaError> {
        LeptonicaLibrary.prepare()
        guard depth == 1 else { throw LeptonicaError("dewarpModel", message: "needs a 1-bpp image, not \(depth) bpp") }
        let factor = reduction == 2 ? 2 : 1
        let source = factor == 2 ? try Pix.make("pixReduceRankBinary2", pixReduceRankBinary2(pointer, 2, nil)) : self
        // One page, default sampling (30 px), default minimum of long lines (15), no reference pages.
        guard let array = dewarpaCreate(1, 0, Int32(factor), 0, -1) else {
            throw LeptonicaError.captured("dewarpaCreate", fallback: "failed")
        }
        // Both disparities when the horizontal one is valid; with several columns only the vertical one.
        dewarpaUseBothArrays(array, 1)
        dewarpaSetCheckColumns(array, 1)
        // Leptonica's limits on line curvature (150 and 170 micro-units) are in model pixels, so they depend on the
        // resolution, and they refuse the curved book pages this is for; the caller decides from the bend relative
        // to the line pitch instead. The edge limits, for the horizontal disparity, stay at their defaults.
        dewarpaSetCurvatures(array, Self.unlimitedCurvature, 0, Self.unlimitedCurvature, -1, -1, -1)
        guard let model = dewarpCreate(source.pointer, 0) else {
            var reference: UnsafeMutablePointer<L_DEWARPA>? = array
            dewarpaDestroy(&reference)
            throw LeptonicaError.captured("dewarpCreate", fallback: "failed")
        }
        // Once inserted, the array owns the model: DewarpModel's deinit (or the failure path) frees both.
        guard dewarpaInsertDewarp(array, model) == 0 else {
            var dew: UnsafeMutablePointer<L_DEWARP>? = model
            dewarpDestroy(&dew)
            var reference: UnsafeMutablePointer<L_DEWARPA>? = array
            dewarpaDestroy(&reference)
            throw LeptonicaError.captured("dewarpaInsertDewarp", fallback: "failed")
        }
        _ = LeptonicaMessages.take()
        let built = dewarpBuildPageModel(model, nil) == 0 && model.pointee.vsuccess != 0
        let messages = LeptonicaMessages.take()
        guard built else {
            var reference: UnsafeMutablePointer<L_DEWARPA>? = array
            dewarpaDestroy(&reference)
            let reason = messages.last.map(Self.plainMessage) ?? "no vertical disparity"
            return .failure(LeptonicaError("dewarpBuildPageModel", message: reason))
        }
        return .success(DewarpModel(array: array, model: model, reduction: factor))
    }

    /// A line curvature no page reaches (10⁶ micro-units: a rise of the whole page's width over its half-width).
    private static let unlimitedCurvature: Int32 = 1_000_000

    /// A Leptonica message without the name of the function that wrote it ("dewarpBuildPageModel: ").
    private static func plainMessage(_ line: String) -> String {
        guard let colon = line.firstIndex(of: ":") else { return line }
        return String(line[line.index(after: colon)...].drop(while: { $0 == " " }))
    }
}
