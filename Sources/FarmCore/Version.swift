/// This build of ocrfarm.
public enum FarmVersion {
    public static let string = "0.1.0"
}
