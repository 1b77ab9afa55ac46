package dev.cudawatch.diagnosis.advice;

import java.util.List;

/** An explanation and the next steps, most useful first. */
public record Advice(String explanation, List<String> nextSteps) {}
