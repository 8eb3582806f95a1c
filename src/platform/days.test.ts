import { describe, expect, it } from 'vitest';
import { ServiceError } from './errors.ts';
import { checkDayRange, dayNumber, dayOf, dayText, monthOf, monthRange, nextMonth, previousMonth } from './days.ts';

describe('dayNumber and dayText (pure)', () => {
  it('takes calendar dates only, leap days included', () => {
    expect(dayNumber('1970-01-01')).toBe(0);
    expect(dayNumber('2026-11-26')).toBe(Date.UTC(2026, 10, 26) / 86_400_000);
    expect(dayNumber('2028-02-29')).not.toBeNull();
    for (const bad of ['2026-02-29', '2026-02-30', '2026-04-31', '2026-13-01', '2026-00-10', '2026-1-1', '1969-12-31', '0000-01-01', '2026-11-26T00:00:00Z', ' 2026-11-26', '']) {
      expect(dayNumber(bad), bad).toBeNull();
    }
    expect(dayNumber('9999-12-31')).not.toBeNull();
  });

  it('writes days back as YYYY-MM-DD', () => {
    expect(dayText(0)).toBe('1970-01-01');
    expect(dayText(dayNumber('2028-02-29')! + 1)).toBe('2028-03-01');
    expect(dayText(dayNumber('2026-12-31')! + 1)).toBe('2027-01-01');
  });
});

describe('dayOf and checkDayRange (pure)', () => {
  it('takes the UTC day of an instant', () => {
    expect(dayText(dayOf(new Date('2026-11-26T23:59:59.999Z')))).toBe('2026-11-26');
    expect(dayText(dayOf(new Date('2026-11-27T00:00:00.000Z')))).toBe('2026-11-27');
  });

  it('answers day numbers for a range of 1 to maxDays days, 400 otherwise', () => {
    expect(checkDayRange('2026-11-01', '2026-11-02', 1)).toEqual({ from: dayNumber('2026-11-01'), to: dayNumber('2026-11-02') });
    const reason = (from: string, to: string, max: number) => {
      try {
        checkDayRange(from, to, max);
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(ServiceError);
        return (error as ServiceError).reason;
      }
    };
    expect(reason('2026-11-01', '2026-11-03', 1)).toBe('invalid-range');
    expect(reason('2026-11-02', '2026-11-01', 10)).toBe('invalid-range');
    expect(reason('2026-11-01', '2026-11-01', 10)).toBe('invalid-range');
    expect(reason('2026-11-31', '2026-12-01', 10)).toBe('invalid-date');
    expect(reason('2026-11-01', 'tomorrow', 10)).toBe('invalid-date');
  });
});

describe('monthOf and monthRange (pure)', () => {
  it('names the UTC month of an instant', () => {
    expect(monthOf(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12');
    expect(monthOf(new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01');
    // 00:30 on 1 December in Berlin is still November in UTC.
    expect(monthOf(new Date('2026-12-01T00:30:00+01:00'))).toBe('2026-11');
  });

  it('gives the half-open UTC range of a month, December rolling into January', () => {
    expect(monthRange('2026-12')).toEqual({ from: new Date('2026-12-01T00:00:00.000Z'), to: new Date('2027-01-01T00:00:00.000Z') });
    expect(monthRange('2026-01')).toEqual({ from: new Date('2026-01-01T00:00:00.000Z'), to: new Date('2026-02-01T00:00:00.000Z') });
    expect(monthRange('2028-02')).toEqual({ from: new Date('2028-02-01T00:00:00.000Z'), to: new Date('2028-03-01T00:00:00.000Z') });
  });

  it('steps to the next and previous month across years', () => {
    expect(nextMonth('2026-12')).toBe('2027-01');
    expect(nextMonth('2026-11')).toBe('2026-12');
    expect(previousMonth('2027-01')).toBe('2026-12');
    expect(previousMonth('2026-03')).toBe('2026-02');
  });
});
