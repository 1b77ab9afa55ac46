package dev.cudawatch.processor.rules;

import java.util.Map;

/**
 * An incident as one rule sees it: the rule, the key it counts under, and when it happened.
 *
 * @param rule rule name
 * @param type the rule's type: {@code count} or {@code spike}
 * @param key the rule name and the key fields' values, the operator's key
 * @param labels key fields by name, for the alert's labels
 * @param incidentId to count an incident once
 * @param eventTime event time in epoch milliseconds
 * @param distinctValue the value of the rule's {@code distinct} field, or the incident id
 * @param unknown for key fields counted as {@code unknown}: which fields, and the attribution
 *     sources that were tried (for the alert), or null when every key field was known
 */
public record RuleEvent(
    String rule,
    String type,
    String key,
    Map<String, String> labels,
    String incidentId,
    long eventTime,
    String distinctValue,
    String unknown) {}
