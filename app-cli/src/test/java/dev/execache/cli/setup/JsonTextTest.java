package dev.execache.cli.setup;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Only the span of the value replaced changes; the file's indentation and line endings are its own. */
class JsonTextTest {
    private static final Path FILE = Path.of("/home/me/settings.json");

    @Test
    void aValueIsReplacedInTheFilesOwnIndentationAndTheRestStaysAsItWas() {
        String text = "{\r\n\t// mine\r\n\t\"a\": {\"x\": 1},\r\n\t\"b\": [1, 2],\r\n}\r\n";
        ObjectNode value = JsonText.LENIENT.createObjectNode();
        value.putObject("y").put("z", "w");

        String rewritten = new JsonText(FILE, text).apply(List.of(new JsonText.Change(List.of("a"), value)));

        assertThat(rewritten).isEqualTo(
                "{\r\n\t// mine\r\n\t\"a\": {\r\n\t\t\"y\": {\r\n\t\t\t\"z\": \"w\"\r\n\t\t}\r\n\t},\r\n\t\"b\": [1, 2],\r\n}\r\n");
    }

    @Test
    void aMissingMemberIsAddedAtTheEndOfItsObject() {
        String text = "{\n  \"a\": 1\n}\n";
        ObjectNode value = JsonText.LENIENT.createObjectNode();

        String rewritten = new JsonText(FILE, text).apply(List.of(new JsonText.Change(List.of("servers"), value)));

        assertThat(rewritten).isEqualTo("{\n  \"a\": 1,\n  \"servers\": {}\n}\n");
    }
}
