package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ExecutionErrorTest {
    @Test
    void whatTheCodeThrewReadsAsJavaScriptSaysItWithNoSecondNameInFront() {
        assertThat(new ExecutionError(ErrorType.RUNTIME_ERROR, "Error: no orders in context", "", 3, 9))
                .hasToString("Error: no orders in context (line 3, column 9)");
        assertThat(new ExecutionError(ErrorType.RUNTIME_ERROR, "TypeError: orders.map is not a function"))
                .hasToString("TypeError: orders.map is not a function");
    }

    @Test
    void failuresExecacheNamesKeepTheirType() {
        assertThat(new ExecutionError(ErrorType.TIMEOUT_ERROR, "the code ran longer than 30 s"))
                .hasToString("TimeoutError: the code ran longer than 30 s");
    }
}
