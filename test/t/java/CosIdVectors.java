/*
 * CosIdVectors: text forms and IDs written by CosId's own classes, for
 * t/081_cosid.pl to compare with idgen's.  Reimplements nothing: every value
 * printed comes from a CosId class (compiled from a CosId checkout at test
 * time, never kept in this repository).
 *
 *   java CosIdVectors COUNT SEED ZONE
 *
 * Prints tab-separated lines:
 *   base62  ID  unpadded  padded
 *   friendly  LAYOUT  ID  UTC-text  ZONE-text-padded
 *   generated  LAYOUT  ID  machine  sequence  unix-ms
 * LAYOUT is idgen's name for the layout: cosid_safe_js_ms, cosid_safe_js_s,
 * or "cosid" for CosId's default MillisecondSnowflakeId (41/10/12 bits).
 */
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Random;

import me.ahoo.cosid.CosId;
import me.ahoo.cosid.converter.Radix62IdConverter;
import me.ahoo.cosid.snowflake.MillisecondSnowflakeId;
import me.ahoo.cosid.snowflake.MillisecondSnowflakeIdStateParser;
import me.ahoo.cosid.snowflake.SafeJavaScriptSnowflakeId;
import me.ahoo.cosid.snowflake.SecondSnowflakeId;
import me.ahoo.cosid.snowflake.SecondSnowflakeIdStateParser;
import me.ahoo.cosid.snowflake.SnowflakeId;
import me.ahoo.cosid.snowflake.SnowflakeIdState;
import me.ahoo.cosid.snowflake.SnowflakeIdStateParser;

public class CosIdVectors {
    static void friendly(String name, SnowflakeId g, boolean second, ZoneId zone, Random rnd, int count) {
        SnowflakeIdStateParser utc = second
            ? SecondSnowflakeIdStateParser.of(g, ZoneOffset.UTC, false)
            : MillisecondSnowflakeIdStateParser.of(g, ZoneOffset.UTC, false);
        SnowflakeIdStateParser local = second
            ? SecondSnowflakeIdStateParser.of(g, zone, true)
            : MillisecondSnowflakeIdStateParser.of(g, zone, true);
        int bits = g.getTimestampBit() + g.getMachineBit() + g.getSequenceBit();
        for (int i = 0; i < count; i++) {
            long id = i == 0 ? 0 : i == 1 ? (1L << bits) - 1 : rnd.nextLong() & ((1L << bits) - 1);
            System.out.println("friendly\t" + name + "\t" + id + "\t" + utc.parse(id).getFriendlyId()
                + "\t" + local.parse(id).getFriendlyId());
        }
        for (int i = 0; i < 3; i++) {
            long id = g.generate();
            SnowflakeIdState s = utc.parse(id);
            long ms = s.getTimestamp().toInstant(ZoneOffset.UTC).toEpochMilli();
            System.out.println("generated\t" + name + "\t" + id + "\t" + s.getMachineId() + "\t"
                + s.getSequence() + "\t" + ms);
        }
    }

    public static void main(String[] args) {
        int count = Integer.parseInt(args[0]);
        Random rnd = new Random(Long.parseLong(args[1]));
        ZoneId zone = ZoneId.of(args[2]);
        for (int i = 0; i < count; i++) {
            long id = i == 0 ? 0 : i == 1 ? Long.MAX_VALUE : (rnd.nextLong() >>> rnd.nextInt(64));
            System.out.println("base62\t" + id + "\t" + Radix62IdConverter.INSTANCE.asString(id) + "\t"
                + Radix62IdConverter.PAD_START.asString(id));
        }
        friendly("cosid_safe_js_ms", SafeJavaScriptSnowflakeId.ofMillisecond(5), false, zone, rnd, count);
        friendly("cosid_safe_js_s", SafeJavaScriptSnowflakeId.ofSecond(3), true, zone, rnd, count);
        friendly("cosid", new MillisecondSnowflakeId(CosId.COSID_EPOCH, MillisecondSnowflakeId.DEFAULT_TIMESTAMP_BIT,
            MillisecondSnowflakeId.DEFAULT_MACHINE_BIT, MillisecondSnowflakeId.DEFAULT_SEQUENCE_BIT, 32, 
            MillisecondSnowflakeId.DEFAULT_SEQUENCE_RESET_THRESHOLD), false, zone, rnd, count);
    }
}
