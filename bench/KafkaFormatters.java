// Kafka's own __consumer_offsets formatters over a file of raw records: the baseline of bench/decode.py.
//
// Run by bench/decode.py as a single-file source program (JEP 330) on the Kafka jars that
// `offsetlake jvm resolve` fetched from Maven Central:
//   java -cp <kafka classpath> bench/KafkaFormatters.java records.bin
// records.bin holds, per record: int32 key length, key, int32 value length (-1: null), value.
// Each record goes to the formatter for its key's record type, as kafka-console-consumer does with
// --formatter: types 0-1 to OffsetsMessageFormatter, 2 to GroupMetadataMessageFormatter (other
// types are skipped, as those formatters skip them). Output goes to a byte-counting sink.
// Prints one JSON line: records, seconds of the timed pass (after a warm-up pass over the first
// 100,000 records, so the JIT has compiled the decoders), bytes printed, peak RSS (VmHWM).
// This is a benchmark harness, not a decoder: the decoding is Kafka's generated classes.

import java.io.DataInputStream;
import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.MessageFormatter;
import org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter;
import org.apache.kafka.tools.consumer.OffsetsMessageFormatter;

public class KafkaFormatters {
    static final class CountingSink extends OutputStream {
        long bytes;
        @Override public void write(int b) { bytes++; }
        @Override public void write(byte[] b, int off, int len) { bytes += len; }
    }

    public static void main(String[] args) throws Exception {
        List<byte[][]> records = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(args[0]), 1 << 20))) {
            while (in.available() > 0) {
                byte[] key = new byte[in.readInt()];
                in.readFully(key);
                int valueLength = in.readInt();
                byte[] value = null;
                if (valueLength >= 0) {
                    value = new byte[valueLength];
                    in.readFully(value);
                }
                records.add(new byte[][] {key, value});
            }
        }
        MessageFormatter offsets = new OffsetsMessageFormatter();
        MessageFormatter groups = new GroupMetadataMessageFormatter();
        CountingSink counter = new CountingSink();
        PrintStream sink = new PrintStream(counter);
        format(records, Math.min(records.size(), 100_000), offsets, groups, sink);
        counter.bytes = 0;
        long started = System.nanoTime();
        format(records, records.size(), offsets, groups, sink);
        double seconds = (System.nanoTime() - started) / 1e9;
        sink.flush();
        long peakKb = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                peakKb = Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        System.out.printf("{\"records\": %d, \"seconds\": %.4f, \"bytes\": %d, \"peak_kb\": %d}%n",
                          records.size(), seconds, counter.bytes, peakKb);
    }

    static void format(List<byte[][]> records, int n, MessageFormatter offsets, MessageFormatter groups,
                       PrintStream sink) {
        for (int i = 0; i < n; i++) {
            byte[] key = records.get(i)[0];
            byte[] value = records.get(i)[1];
            int type = key.length >= 2 ? (short) (((key[0] & 0xff) << 8) | (key[1] & 0xff)) : -1;
            MessageFormatter formatter = type == 0 || type == 1 ? offsets : type == 2 ? groups : null;
            if (formatter != null) {
                formatter.writeTo(new ConsumerRecord<>("__consumer_offsets", 0, i, key, value), sink);
            }
        }
    }
}
