package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class FrameFieldsTest {

    @Test
    void readsFieldsCountedInUtf16UnitsAndGivesTheRest() {
        assertThat(FrameFields.read("2:fs9:read_file{\"path\":\"a:b\"}", 2, "tool call"))
                .containsExactly("fs", "read_file", "{\"path\":\"a:b\"}");
        assertThat(FrameFields.read("0:2:😀3:a:b", 3, "error")).containsExactly("", "😀", "a:b", "");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "fs", ":fs", "x:fs", "-1:fs", "5:fs", "2:fs"})
    void refusesWhatIsNotThere(String text) {
        assertThatThrownBy(() -> FrameFields.read(text, 2, "tool call"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("malformed tool call frame");
    }
}
