package dev.execache.core;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A cheap read-only call that tells whether a cached tool's answer still holds (a file's info for
 * its read): when the stored answer has expired, the validator is asked, and if its answer is the
 * one it gave when the answer was stored, the stored answer stands.
 *
 * @param tool the validator ({@code SERVER__TOOL}, an exact name)
 * @param arguments the validator's arguments by name: {@code "{name}"} is the cached call's argument
 *     {@code name} (any JSON value), any other text is itself; empty: the cached call's own arguments
 */
public record ToolValidator(String tool, Map<String, String> arguments) {
    /** A whole value naming one of the call's arguments: {@code {path}}. */
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([^{}]+)}");

    public ToolValidator {
        if (tool == null || tool.isBlank()) {
            throw new IllegalArgumentException("the validator's tool must not be blank");
        }
        arguments = arguments == null ? Map.of() : Map.copyOf(arguments);
        arguments.forEach((name, value) -> Objects.requireNonNull(value, "validator argument " + name + " is null"));
    }

    /** The validator's tool with the cached call's own arguments. */
    public static ToolValidator sameArguments(String tool) {
        return new ToolValidator(tool, Map.of());
    }

    /** The call argument a validator argument's value names ({@code path} for {@code {path}}); empty for plain text. */
    public static Optional<String> placeholder(String value) {
        Matcher matcher = PLACEHOLDER.matcher(value);
        return matcher.matches() ? Optional.of(matcher.group(1)) : Optional.empty();
    }

    /** The call arguments the validator's arguments are taken from; empty when it takes them all as they are. */
    public Set<String> callArguments() {
        Set<String> names = new LinkedHashSet<>();
        arguments.values().forEach(value -> placeholder(value).ifPresent(names::add));
        return names;
    }

    /**
     * The validator's arguments for a call with {@code callArguments}; empty when the call lacks an
     * argument the validator takes (the call is then kept for its TTL only).
     */
    public Optional<Map<String, Object>> fill(Map<String, ?> callArguments) {
        Map<String, ?> call = callArguments == null ? Map.of() : callArguments;
        if (arguments.isEmpty()) {
            return Optional.of(new LinkedHashMap<>(call));
        }
        Map<String, Object> filled = new LinkedHashMap<>();
        for (Map.Entry<String, String> argument : arguments.entrySet()) {
            Optional<String> from = placeholder(argument.getValue());
            if (from.isPresent() && !call.containsKey(from.get())) {
                return Optional.empty();
            }
            filled.put(argument.getKey(), from.isPresent() ? call.get(from.get()) : argument.getValue());
        }
        return Optional.of(filled);
    }
}
