package offsetlake.decode;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.utils.ByteUtils;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The buffer Kafka's generated {@code read} methods pull a message through, watching what Kafka's
 * own reader accepts silently but its writer never produces: a varint longer than the shortest
 * encoding of its value; and, for a uuid in a tagged field (OffsetCommitValue's topic id, its only
 * uuid), a declared size other than the uuid's 16 bytes: the generated reader reads a known tag's
 * value without checking the size before it (KIP-482: tag, size, value), see {@link #uuidsTagSized}.
 *
 * <p>Why: proving that a flexible-version message decodes exactly (that Kafka's classes would write
 * back the input's bytes) with Kafka's {@code size()} per record, an {@code ObjectSerializationCache} and
 * the strings re-encoded cost about a quarter of an offset commit's decode (recorded in CHANGELOG.md).
 * Watching the reads as they happen proves the same for a message with no tagged field kept: every fixed-width field and every string
 * that was valid UTF-8 writes back to its own bytes, and the varints (compact string and array
 * lengths, the tagged-field count) are the only other bytes Kafka's writer chooses; it always writes
 * the minimal encoding ({@code ByteUtils.writeUnsignedVarint}).
 *
 * <p>Kafka's parsing stays Kafka's: the generated classes decide what to read and in what order; this
 * class forwards every read to {@link ByteBufferAccessor}, except {@link #readString}, which does what
 * Kafka's does minus a copy, and remembers where strings' bytes are, so that Spark's strings can be
 * taken from the record itself ({@link #utf8}). For offset commits it skips the Java string altogether
 * when the bytes are ASCII ({@code asciiByPosition}): group, topic and metadata are then never decoded,
 * only checked and wrapped (making Java strings was a tenth of the decode's profile; the gain is recorded
 * in CHANGELOG.md).
 *
 * <p>Also the buffer of GroupMetadataExpression's records: their v4+ values are checked the same way,
 * and their strings skip the copy.
 */
final class CanonicalReader extends ByteBufferAccessor {
    /** A uuid's size on the wire: two int64s ({@code Readable.readUuid}). */
    private static final int UUID_BYTES = 16;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long HIGH_BITS = 0x8080808080808080L;
    private final ByteBuffer buffer;
    private boolean canonical = true;
    private int uuidsRead;
    private int uuidsTagSized;
    private int lastVarint = -1;
    private int lastVarintEnd = -1;
    /** The first two strings read and where their bytes are: fields, not arrays (one message per reader at a time). */
    private String first;
    private int firstStart;
    private int firstLength;
    private String second;
    private int secondStart;
    private int secondLength;
    private int stringsRead;
    private int unknownTaggedFields;
    /** Whether the first two strings, when all ASCII, are returned as {@link #ASCII_FIRST}/{@link #ASCII_SECOND}. */
    private final boolean asciiByPosition;
    /** Whether an int16 below -1 makes the message non-canonical ({@link #withStringNullsOfMinusOneOnly}). */
    private boolean stringNullsOfMinusOneOnly;

    /**
     * Stand-ins for the first two strings of a record read with {@code asciiByPosition}: distinct objects
     * (compared by identity in {@link #utf8}), empty, so without U+FFFD. Kafka's generated classes only
     * store the strings they read; a caller that wants the text takes it through {@link #utf8}.
     */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String ASCII_FIRST = new String("");
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String ASCII_SECOND = new String("");

    CanonicalReader(ByteBuffer buffer) {
        this(buffer, false);
    }

    /**
     * With {@code asciiByPosition}, the first two strings, when all ASCII, are not turned into Java strings
     * at all: the record's bytes are their UTF-8 as they stand, and {@link #utf8} takes them from there.
     * Only for a caller that reads those strings through {@link #utf8} and nowhere else
     * (OffsetCommitExpression: group, topic; metadata).
     */
    CanonicalReader(ByteBuffer buffer, boolean asciiByPosition) {
        super(buffer);
        this.buffer = buffer;
        this.asciiByPosition = asciiByPosition;
    }

    /**
     * This reader, also watching the null markers of nullable strings in non-flexible messages
     * (GroupMetadataValue v0-3, the consumer protocol's Subscription): their int16 length prefix, where
     * Kafka's generated readers take <em>any</em> negative length as null ({@code if (length < 0)
     * { this.leader = null; }}) while its writers write -1. A record with a length of, say, -34 would decode
     * to a null that writes back as -1, where the reference decoder (decoders/codec.py read_length) names a
     * negative length; so any int16 below -1 marks the message as not canonical and the reference takes it.
     * Only for messages whose every int16 is a string length (those above and GroupMetadataKey: no int16
     * field in their JSON schemas); nullable bytes have an int32 length, checked where they are read
     * (GroupMetadataExpression.nullMarkedMinusOne). The fuzzing differential test
     * (tests/pipelines/test_decode.py) found such records.
     */
    CanonicalReader withStringNullsOfMinusOneOnly() {
        stringNullsOfMinusOneOnly = true;
        return this;
    }

    /**
     * Ready for the next message read through the same buffer ({@link Reused}): everything this reader
     * watched forgotten, as if new.
     */
    private void reset() {
        canonical = true;
        uuidsRead = 0;
        uuidsTagSized = 0;
        lastVarint = -1;
        lastVarintEnd = -1;
        first = null;
        second = null;
        stringsRead = 0;
        unknownTaggedFields = 0;
    }

    /** The buffer this reader reads (its position: how far the message's reader got). */
    ByteBuffer bytes() {
        return buffer;
    }

    /**
     * How many tagged fields the message's reader did not know (kept by Kafka's classes as raw fields).
     * Counted here so that a caller need not ask the message: its {@code unknownTaggedFields()} makes an
     * empty list for every message that had none.
     */
    int unknownTaggedFields() {
        return unknownTaggedFields;
    }

    @Override
    public List<RawTaggedField> readUnknownTaggedField(List<RawTaggedField> unknowns, int tag, int size) {
        unknownTaggedFields++;
        return super.readUnknownTaggedField(unknowns, tag, size);
    }

    @Override
    public short readShort() {
        short value = super.readShort();
        canonical &= !stringNullsOfMinusOneOnly || value >= -1;
        return value;
    }

    /** Every varint read so far had its minimal length, as Kafka's writer would have written it. */
    boolean canonical() {
        return canonical;
    }

    /** How many uuids the message's reader took from the buffer. */
    int uuidsRead() {
        return uuidsRead;
    }

    /**
     * How many of the uuids read came right after an unsigned varint of 16: in a tagged field, the
     * size the field declares (KIP-482's tag, size, value). Equal to {@link #uuidsRead} for a message
     * whose uuids are all tagged fields of the right declared size.
     */
    int uuidsTagSized() {
        return uuidsTagSized;
    }

    @Override
    public int readUnsignedVarint() {
        int start = buffer.position();
        int value = super.readUnsignedVarint();
        canonical &= buffer.position() - start == ByteUtils.sizeOfUnsignedVarint(value);
        lastVarint = value;
        lastVarintEnd = buffer.position();
        return value;
    }

    /**
     * What Readable's own {@code readString} does ({@code new String(readArray(length), UTF_8)}) without
     * the intermediate array, remembering where the first strings' bytes are, for {@link #utf8}. A
     * length past the buffer's end throws, as {@code readArray} does.
     */
    @Override
    public String readString(int length) {
        if (length < 0 || length > buffer.remaining()) {
            throw new IllegalStateException("Error reading string of length " + length + ", only "
                    + buffer.remaining() + " bytes remaining");
        }
        int start = buffer.arrayOffset() + buffer.position();
        String string = asciiByPosition && stringsRead < 2 && ascii(buffer.array(), start, length)
                ? (stringsRead == 0 ? ASCII_FIRST : ASCII_SECOND)
                : new String(buffer.array(), start, length, StandardCharsets.UTF_8);
        buffer.position(buffer.position() + length);
        if (stringsRead == 0) {
            first = string;
            firstStart = start;
            firstLength = length;
        } else if (stringsRead == 1) {
            second = string;
            secondStart = start;
            secondLength = length;
        }
        stringsRead++;
        return string;
    }

    /**
     * Whether {@code length} bytes from {@code start} are all ASCII, eight at a time (a word with no high
     * bit set), then byte by byte: it runs on every group and topic of every commit, and a byte loop was
     * the decode's most sampled method in a JFR profile.
     */
    private static boolean ascii(byte[] bytes, int start, int length) {
        int i = start;
        int end = start + length;
        for (; end - i >= Long.BYTES; i += Long.BYTES) {
            if (((long) LONGS.get(bytes, i) & HIGH_BITS) != 0) {
                return false;
            }
        }
        for (; i < end; i++) {
            if (bytes[i] < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code string}, one this reader returned, as Spark's UTF8String over its bytes in the buffer's
     * array, not copied; any other string converted. Call it only once the string is known to be
     * valid UTF-8 (no U+FFFD, OffsetCommitExpression.validUtf8): then its bytes are exactly its UTF-8
     * encoding, as many as Java's encoding of it takes. Why: turning Kafka's Java strings back into
     * UTF-8 cost an array and a copy each.
     */
    UTF8String utf8(String string) {
        if (string == null) {
            return null;
        }
        if (string == first) {
            return UTF8String.fromBytes(buffer.array(), firstStart, firstLength);
        }
        if (string == second) {
            return UTF8String.fromBytes(buffer.array(), secondStart, secondLength);
        }
        return UTF8String.fromString(string);
    }

    /**
     * {@code string}, one this reader returned, written as field {@code ordinal} of {@code row} (null as
     * null): the bytes of the buffer's array where the string was read, or any other string encoded.
     * The same condition as {@link #utf8}: only once the string is known to be valid UTF-8.
     */
    void writeUtf8(UnsafeRowWriter row, int ordinal, String string) {
        if (string == null) {
            row.setNullAt(ordinal);
        } else if (string == first) {
            row.write(ordinal, buffer.array(), firstStart, firstLength);
        } else if (string == second) {
            row.write(ordinal, buffer.array(), secondStart, secondLength);
        } else {
            row.write(ordinal, UTF8String.fromString(string));
        }
    }

    @Override
    public int readVarint() {
        int start = buffer.position();
        int value = super.readVarint();
        canonical &= buffer.position() - start == ByteUtils.sizeOfVarint(value);
        return value;
    }

    @Override
    public long readVarlong() {
        int start = buffer.position();
        long value = super.readVarlong();
        canonical &= buffer.position() - start == ByteUtils.sizeOfVarlong(value);
        return value;
    }

    @Override
    public Uuid readUuid() {
        uuidsRead++;
        if (lastVarintEnd == buffer.position() && lastVarint == UUID_BYTES) {
            uuidsTagSized++;
        }
        return super.readUuid();
    }

    /**
     * One reader and its buffer for one caller's records, one after another, each record's bytes copied
     * into the buffer's own array. Made per record, two buffers and two readers (and Kafka's two messages,
     * and a row writer) were about half of what a commit's decode allocated beside Spark's own copies of the
     * key and value, and writing freshly allocated rows took a tenth of a JFR profile of the decode (the gain
     * of reusing them is recorded in CHANGELOG.md).
     * Not thread-safe: one per caller and thread (OffsetCommitExpression.CommitDecode).
     * The strings {@link #utf8} and {@link #writeUtf8} take from the array are valid until the next
     * {@link #read}: a caller copies them (into a row) before that.
     */
    static final class Reused {
        /** The largest record read through the caller's own array (64 KiB). */
        static final int KEPT_BYTES = 1 << 16;
        private final boolean asciiByPosition;
        private byte[] array = new byte[128];
        private ByteBuffer buffer = ByteBuffer.wrap(array);
        private CanonicalReader reader;

        Reused(boolean asciiByPosition) {
            this.asciiByPosition = asciiByPosition;
            reader = new CanonicalReader(buffer, asciiByPosition);
        }

        /**
         * The reader, reset, over a copy of {@code bytes}, at its start; for a record larger than {@link
         * #KEPT_BYTES}, a reader of its own over its bytes, so that a caller's array stays bounded. No commit
         * Kafka writes is that large (each of its strings is at most 32,767 bytes, Kafka's string limit).
         */
        CanonicalReader read(byte[] bytes) {
            if (bytes.length > KEPT_BYTES) {
                return new CanonicalReader(ByteBuffer.wrap(bytes), asciiByPosition);
            }
            if (bytes.length > array.length) {
                array = new byte[Math.max(bytes.length, 2 * array.length)];
                buffer = ByteBuffer.wrap(array);
                reader = new CanonicalReader(buffer, asciiByPosition);
            }
            System.arraycopy(bytes, 0, array, 0, bytes.length);
            buffer.clear().limit(bytes.length);
            reader.reset();
            return reader;
        }
    }
}
