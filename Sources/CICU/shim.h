// ICU renames every C entry point with its version (ubrk_open is a macro for ubrk_open_72), and Swift does not
// import function-like macros; so Swift calls these small wrappers, which the C compiler resolves to the real names.
#include <unicode/utypes.h>
#include <unicode/ubrk.h>
#include <unicode/uversion.h>

/// Opens a break iterator of `type` for `locale` ("" is the root locale) over `text` (may be NULL, length 0).
/// Free it with ocr_ubrk_close.
static inline UBreakIterator *ocr_ubrk_open(UBreakIteratorType type, const char *locale, const UChar *text,
                                            int32_t length, UErrorCode *status) {
    return ubrk_open(type, locale, text, length, status);
}

/// Points the iterator at `text`, which ICU does not copy: it must stay valid while the iterator walks it.
static inline void ocr_ubrk_setText(UBreakIterator *iterator, const UChar *text, int32_t length, UErrorCode *status) {
    ubrk_setText(iterator, text, length, status);
}

/// Points the iterator at an empty static text, so it holds no pointer into a caller's buffer between uses.
static inline void ocr_ubrk_clearText(UBreakIterator *iterator) {
    static const UChar empty[1] = {0};
    UErrorCode status = U_ZERO_ERROR;
    ubrk_setText(iterator, empty, 0, &status);
}

static inline int32_t ocr_ubrk_first(UBreakIterator *iterator) { return ubrk_first(iterator); }
static inline int32_t ocr_ubrk_next(UBreakIterator *iterator) { return ubrk_next(iterator); }
static inline int32_t ocr_ubrk_getRuleStatus(UBreakIterator *iterator) { return ubrk_getRuleStatus(iterator); }
static inline void ocr_ubrk_close(UBreakIterator *iterator) { ubrk_close(iterator); }

/// Whether `code` is an error (warnings and U_ZERO_ERROR are not).
static inline int ocr_u_failure(UErrorCode code) { return U_FAILURE(code); }
static inline const char *ocr_u_errorName(UErrorCode code) { return u_errorName(code); }

/// The ICU version as text ("72.1"); `buffer` needs U_MAX_VERSION_STRING_LENGTH bytes.
static inline void ocr_u_versionString(char *buffer) {
    UVersionInfo version;
    u_getVersion(version);
    u_versionToString(version, buffer);
}
