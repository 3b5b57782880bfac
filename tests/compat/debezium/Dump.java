// SPDX-License-Identifier: Apache-2.0
//
// Dumps records of Kafka topics exactly as consumers see them, for tests/compat/debezium/compat.py:
// key and value bytes (null distinct from empty), headers in order (null values distinct from
// empty ones), partition, offset, timestamp.
//
//   java -cp "$(cat $OUTBOXD_TEST_KAFKA_CLASSPATH)" Dump.java BOOTSTRAP TOPIC-SUBSTRING START-FILE OUT-FILE END-FILE
//
// Every topic whose name contains TOPIC-SUBSTRING is read from the offsets in START-FILE
// ("topic<TAB>partition<TAB>offset" lines; absent partitions start at 0; "-" for none) up to the
// end offsets taken when the dump starts, which are written to END-FILE in the same format.
// OUT-FILE gets one JSON object per record: {"topic","partition","offset","ts","tstype","key",
// "value","headers":[[name, value]...]}; byte values are lowercase hex strings or null. Topic and
// header names are written as JSON strings with every non-ASCII or control char escaped.
import java.io.BufferedReader;
import java.io.FileReader;
import java.io.FileWriter;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class Dump {
    static String hex(byte[] b) {
        if (b == null) {
            return "null";
        }
        StringBuilder s = new StringBuilder(b.length * 2 + 2).append('"');
        for (byte x : b) {
            s.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
        }
        return s.append('"').toString();
    }

    static String str(String v) {
        StringBuilder s = new StringBuilder().append('"');
        for (char c : v.toCharArray()) {
            if (c == '"' || c == '\\') {
                s.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                s.append(String.format("\\u%04x", (int) c));
            } else {
                s.append(c);
            }
        }
        return s.append('"').toString();
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], sub = args[1];
        Map<TopicPartition, Long> start = new HashMap<>();
        if (!args[2].equals("-")) {
            try (BufferedReader r = new BufferedReader(new FileReader(args[2]))) {
                for (String line; (line = r.readLine()) != null;) {
                    String[] f = line.split("\t");
                    if (f.length == 3) {
                        start.put(new TopicPartition(f[0], Integer.parseInt(f[1])), Long.parseLong(f[2]));
                    }
                }
            }
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("max.partition.fetch.bytes", "4194304");
        p.put("fetch.max.bytes", "16777216");
        p.put("isolation.level", "read_uncommitted");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
             PrintWriter out = new PrintWriter(new FileWriter(args[3], java.nio.charset.StandardCharsets.UTF_8));
             PrintWriter endOut = new PrintWriter(new FileWriter(args[4], java.nio.charset.StandardCharsets.UTF_8))) {
            List<TopicPartition> parts = new ArrayList<>();
            for (Map.Entry<String, List<PartitionInfo>> e : c.listTopics(Duration.ofSeconds(30)).entrySet()) {
                if (!e.getKey().contains(sub)) {
                    continue;
                }
                for (PartitionInfo pi : e.getValue()) {
                    parts.add(new TopicPartition(pi.topic(), pi.partition()));
                }
            }
            Map<TopicPartition, Long> end = c.endOffsets(parts, Duration.ofSeconds(30));
            c.assign(parts);
            long remaining = 0;
            for (TopicPartition tp : parts) {
                long s = start.getOrDefault(tp, 0L), e = end.get(tp);
                endOut.println(tp.topic() + "\t" + tp.partition() + "\t" + e);
                c.seek(tp, s);
                remaining += Math.max(0, e - s);
            }
            long deadline = System.currentTimeMillis() + 60000;
            while (remaining > 0 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= end.get(tp)) {
                        continue;
                    }
                    remaining--;
                    StringBuilder h = new StringBuilder("[");
                    for (Header x : r.headers()) {
                        if (h.length() > 1) {
                            h.append(',');
                        }
                        h.append('[').append(str(x.key())).append(',').append(hex(x.value())).append(']');
                    }
                    h.append(']');
                    out.println("{\"topic\":" + str(r.topic()) + ",\"partition\":" + r.partition()
                        + ",\"offset\":" + r.offset() + ",\"ts\":" + r.timestamp()
                        + ",\"tstype\":" + str(r.timestampType().toString())
                        + ",\"key\":" + hex(r.key()) + ",\"value\":" + hex(r.value())
                        + ",\"headers\":" + h + "}");
                }
            }
            if (remaining > 0) {
                System.err.println("Dump: " + remaining + " records not read within 60 s");
                System.exit(1);
            }
        }
    }
}
