import CLeptonica

extension Pix {
    /// The boxes of the areas where dark pixels (below `threshold`) make up more than `density` of a
    /// (2·`halfWindow`+1)² square around each point: solid or nearly solid dark regions (a reverse-video band, a
    /// slide's background), which ordinary dark text on paper never is. Boxes are in this image's pixels.
    public func denseDarkBoxes(halfWindow: Int, density: Double, threshold: Int = 128) throws(LeptonicaError) -> [Box] {
        LeptonicaLibrary.prepare()
        let dark = try binarized(threshold: threshold)
        // Dark as 255, so the box mean is the dark share times 255.
        let share = try Pix.make("pixConvert1To8", pixConvert1To8(nil, dark.pointer, 0, 255))
        let mean = try Pix.make("pixBlockconv", pixBlockconv(share.pointer, Int32(halfWindow), Int32(halfWindow)))
        // pixThresholdToBinary sets pixels below the threshold: the sparse ones; inverted, the dense ones.
        let level = Int32(min(255, max(1, (density * 255).rounded())))
        let sparse = try Pix.make("pixThresholdToBinary", pixThresholdToBinary(mean.pointer, level))
        let dense = try Pix.make("pixInvert", pixInvert(nil, sparse.pointer))
        return try dense.connectedComponentBoxes()
    }
}
