package dev.execache.sandbox;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;

/**
 * Checks that text is one JSON value (RFC 8259) with Jackson's streaming parser, which reads
 * token by token without building the value and without recursion, so that a result is JSON
 * whatever reached the host. The sandbox already bounds a result's size, so Jackson's own
 * limits (nesting depth, string and number length) are lifted: any depth JavaScript can
 * serialize is kept.
 */
final class JsonSyntax {
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(Integer.MAX_VALUE)
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxNameLength(Integer.MAX_VALUE)
                    .build())
            .build();

    private JsonSyntax() {
    }

    static boolean isValid(String text) {
        try (JsonParser parser = JSON.createParser(text)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                return false;
            }
            parser.skipChildren();
            return parser.nextToken() == null;
        } catch (IOException e) {
            return false;
        }
    }
}
