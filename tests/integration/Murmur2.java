// Prints, for each hex-encoded key read from standard input (one per line; "-" is the empty
// key), the partition the Java producer's default partitioner picks for it among N partitions:
// toPositive(Utils.murmur2(keyBytes)) % N. Run with the kafka-clients jar on the classpath:
//   java -cp "$(cat $OUTBOXD_TEST_KAFKA_CLASSPATH)" Murmur2.java 3 < keys
// The integration suite compares outboxd's partitions (librdkafka murmur2_random) with these.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.Utils;

public class Murmur2 {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            byte[] key = line.equals("-") ? new byte[0] : hex(line);
            out.append(Utils.toPositive(Utils.murmur2(key)) % n).append('\n');
        }
        System.out.print(out);
    }

    private static byte[] hex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
