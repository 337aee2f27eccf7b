import CLeptonica

/// The ruling lines of an image: a mask of their pixels and the box of each line.
public struct RulingLines {
    /// 1 bit, the image's size: the lines' pixels, grown by one pixel so their anti-aliased edges go too.
    public let mask: Pix
    /// How many pixels `mask` sets.
    public let pixels: Int
    public let horizontal: [Box]
    public let vertical: [Box]
}

extension Pix {
    /// The ruling lines of this image: runs of dark pixels (below `threshold`) at least `length` long, horizontal
    /// or vertical, and at most `thickness` across. A brick opening keeps only what a `length` × 1 (or 1 × `length`)
    /// bar fits inside, which glyphs never are; the thickness limit keeps solid dark areas (bands, pictures) out.
    public func rulingLines(length: Int, thickness: Int, threshold: Int = 160) throws(LeptonicaError) -> RulingLines {
        LeptonicaLibrary.prepare()
        let dark = try binarized(threshold: threshold)
        let long = max(2, length)
        let horizontal = try Pix.make("pixOpenBrick", pixOpenBrick(nil, dark.pointer, Int32(long), 1))
        let vertical = try Pix.make("pixOpenBrick", pixOpenBrick(nil, dark.pointer, 1, Int32(long)))
        var changed: Int32 = 0
        let rows = try Pix.make("pixSelectBySize", pixSelectBySize(
            horizontal.pointer, 0, Int32(thickness), 8, Int32(L_SELECT_HEIGHT), Int32(L_SELECT_IF_LTE), &changed))
        let columns = try Pix.make("pixSelectBySize", pixSelectBySize(
            vertical.pointer, Int32(thickness), 0, 8, Int32(L_SELECT_WIDTH), Int32(L_SELECT_IF_LTE), &changed))
        let both = try Pix.make("pixOr", pixOr(nil, rows.pointer, columns.pointer))
        let mask = try Pix.make("pixDilateBrick", pixDilateBrick(nil, both.pointer, 3, 3))
        var count: Int32 = 0
        guard pixCountPixels(mask.pointer, &count, nil) == 0 else {
            throw LeptonicaError.captured("pixCountPixels", fallback: "cannot count")
        }
        return RulingLines(mask: mask, pixels: Int(count), horizontal: try rows.componentBoxes(grownBy: 1, 1),
                           vertical: try columns.componentBoxes(grownBy: 1, 1))
    }

    /// A copy of this image, as 8-bit gray, with the pixels set in the 1-bit `mask` (of the same size) painted
    /// white.
    public func whitened(through mask: Pix) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard mask.depth == 1, mask.width == width, mask.height == height else {
            throw LeptonicaError("pixSetMasked", message: "the mask must be 1-bit and of the image's size")
        }
        let copy = try grayscale().copy()
        guard pixSetMasked(copy.pointer, mask.pointer, 255) == 0 else {
            throw LeptonicaError.captured("pixSetMasked", fallback: "failed")
        }
        return copy
    }

    /// A copy of this image, as 8-bit gray, with the pixels set in the 1-bit `mask` (of the same size) painted
    /// white inside `boxes` only.
    public func whitened(through mask: Pix, within boxes: [Box]) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard mask.depth == 1, mask.width == width, mask.height == height else {
            throw LeptonicaError("pixSetMaskedGeneral", message: "the mask must be 1-bit and of the image's size")
        }
        let copy = try grayscale().copy()
        for box in boxes {
            let part = try mask.cropped(to: box)
            guard pixSetMaskedGeneral(copy.pointer, part.pointer, 255, Int32(max(0, box.x)), Int32(max(0, box.y))) == 0 else {
                throw LeptonicaError.captured("pixSetMaskedGeneral", fallback: "failed")
            }
        }
        return copy
    }
}
