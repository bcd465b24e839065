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

}
