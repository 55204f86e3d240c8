import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;

/**
 * Reads offsetlake's __consumer_offsets records ("keyHex valueHex|-" per line) with Kafka 4.2's own
 * GroupCoordinatorRecordSerde, writes them back, and prints "SAME <record>" when Kafka's bytes equal
 * the input, "DIFF ..." otherwise, or "ERROR ..." when Kafka cannot read them.
 */
public class RecordOracle {
    private static byte[] unhex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    public static void main(String[] args) throws Exception {
        GroupCoordinatorRecordSerde serde = new GroupCoordinatorRecordSerde();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ");
            byte[] key = unhex(f[0]);
            byte[] value = f[1].equals("-") ? null : unhex(f[1]);
            try {
                CoordinatorRecord record = serde.deserialize(ByteBuffer.wrap(key), value == null ? null : ByteBuffer.wrap(value));
                byte[] key2 = serde.serializeKey(record);
                byte[] value2 = serde.serializeValue(record);
                boolean same = Arrays.equals(key, key2) && Arrays.equals(value, value2);
                out.append(same ? "SAME " : "DIFF ").append(record.toString().replace('\n', ' ')).append('\n');
            } catch (Exception e) {
                out.append("ERROR ").append(e.getClass().getSimpleName()).append(' ').append(e.getMessage()).append('\n');
            }
        }
        System.out.print(out);
    }
}
