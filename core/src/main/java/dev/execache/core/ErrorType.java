package dev.execache.core;

/** What kind of failure a run ended with. The names are what users see. */
public enum ErrorType {
    SYNTAX_ERROR("SyntaxError"),
    RUNTIME_ERROR("RuntimeError"),
    TIMEOUT_ERROR("TimeoutError"),
    MEMORY_ERROR("MemoryError"),
    PERMISSION_ERROR("PermissionError"),
    SERIALIZATION_ERROR("SerializationError"),
    OUTPUT_LIMIT_ERROR("OutputLimitError");

    private final String displayName;

    ErrorType(String displayName) {
        this.displayName = displayName;
    }

    public String displayName() {
        return displayName;
    }

    /** @throws IllegalArgumentException for a name that is not one of {@link #displayName()} */
    public static ErrorType fromDisplayName(String name) {
        for (ErrorType type : values()) {
            if (type.displayName.equals(name)) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown error type: " + name);
    }
}
