/// A dense float32 tensor: its shape (outermost first) and its values in row-major order.
/// Nothing is checked when it is made; `InferenceSession.run` refuses one whose shape does not fit its values.
public struct Tensor: Sendable, Equatable {
    public var shape: [Int]
    public var values: [Float]

    public init(shape: [Int], values: [Float]) {
        self.shape = shape
        self.values = values
    }

    /// The number of values the shape calls for, or nil when a dimension is negative or the product overflows.
    public var elementCount: Int? {
        var count = 1
        for dimension in shape {
            guard dimension >= 0 else { return nil }
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            if overflow { return nil }
            count = product
        }
        return count
    }
}
