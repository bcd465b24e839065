package dev.execache.core.spi;

/**
 * What a tool call made by code gives back to the code: a value (JSON text) or an error message.
 */
public record ToolAnswer(String valueJson, String errorMessage) {
    public ToolAnswer {
        if ((valueJson == null) == (errorMessage == null)) {
            throw new IllegalArgumentException("exactly one of valueJson and errorMessage must be set");
        }
    }

    public static ToolAnswer value(String json) {
        return new ToolAnswer(json, null);
    }

    public static ToolAnswer error(String message) {
        return new ToolAnswer(null, message);
    }

    public boolean isError() {
        return errorMessage != null;
    }
}
